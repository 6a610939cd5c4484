import { startTransition, StrictMode } from 'react';
import { createRoot, hydrateRoot } from 'react-dom/client';
import { PAGES, pageAt } from '../../shared/site/pages.js';
import { BrowserRouter } from '../site/router.js';
import { App } from './App.js';
import { preloadPage } from './lazy-pages.js';

const container = document.getElementById('root');
if (!container) throw new Error('#root is missing from the page');

let markMounted: () => void = () => {};
/** Settles once the page is hydrated (or rendered) and its effects have run: its forms are the app's now. */
export const mounted = new Promise<void>((resolve) => {
  markMounted = resolve;
});

const app = (
  <StrictMode>
    <BrowserRouter>
      <App onMounted={markMounted} />
    </BrowserRouter>
  </StrictMode>
);

// Prerendered pages are hydrated, as a transition: the page is already on screen and usable, so React
// hydrates in slices that leave the main thread free for input in between (as Next.js does). Two cases
// are rendered from scratch instead: the lazily loaded pages (/auth, /admin), whose HTML is only a
// loading shell, and the dev server's empty page.
const page = pageAt(window.location.pathname);
if (container.firstElementChild && !PAGES[page].clientOnly) {
  startTransition(() => {
    hydrateRoot(container, app);
  });
} else {
  // The loading shell stays on screen while the page's code loads: rendered with its code in, the
  // page does not suspend (React would hold its reveal back for 300 ms after the fallback).
  void preloadPage(page).then(() => createRoot(container).render(app));
}
