import './styles.css';
import { StrictMode } from 'react';
import { createRoot, hydrateRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router';
import { PAGES, pageAt } from '../shared/site/pages.js';
import { App } from './app/App.js';

const container = document.getElementById('root');
if (!container) throw new Error('#root is missing from the page');

const app = (
  <StrictMode>
    <BrowserRouter>
      <App />
    </BrowserRouter>
  </StrictMode>
);

// Prerendered pages are hydrated. Two cases are rendered from scratch instead: the lazily loaded pages
// (/auth, /admin), whose HTML is only a loading shell, and the dev server's empty page.
if (container.firstElementChild && !PAGES[pageAt(window.location.pathname)].clientOnly) hydrateRoot(container, app);
else createRoot(container).render(app);
