import './styles.css';
import { PAGES, pageAt } from '../shared/site/pages.js';

/**
 * The page's one script tag, kept to a few hundred bytes. A prerendered page is complete without
 * JavaScript (its form posts as a plain form), so it goes on screen first; only then does the app load
 * and hydrate it (app/start.tsx). Loaded earlier, React (70 KB) would share the connection with the
 * stylesheet and its start-up would hold the first paint back. Pages with nothing prerendered (the
 * loading shells of /auth and /admin, the dev server's empty page) load the app at once.
 */
function afterFirstContentfulPaint(callback: () => void): void {
  const container = document.getElementById('root');
  const prerendered = Boolean(container?.firstElementChild) && !PAGES[pageAt(window.location.pathname)].clientOnly;
  const painted = () => performance.getEntriesByName('first-contentful-paint').length > 0;
  // A hidden tab does not paint; a browser without paint timing cannot tell.
  if (!prerendered || painted() || document.visibilityState === 'hidden' || !PerformanceObserver.supportedEntryTypes.includes('paint')) {
    callback();
    return;
  }
  let started = false;
  const start = () => {
    if (started) return;
    started = true;
    observer.disconnect();
    document.removeEventListener('visibilitychange', start);
    window.clearTimeout(fallback);
    callback();
  };
  const observer = new PerformanceObserver(() => {
    if (painted()) start();
  });
  observer.observe({ type: 'paint' });
  // Hidden before painting (no paint entry will come), or a paint that is never reported: go anyway.
  document.addEventListener('visibilitychange', start);
  const fallback = window.setTimeout(start, 3000);
}

/**
 * Between the first paint and hydration, a submitted form is held and submitted again once the app
 * handles it (the idea of Angular's event replay): a visitor who submits that early gets the same
 * toasts and page change as one who waits. The browser's own validation is held with it (its `invalid`
 * events), since the app replaces it with toasts. Should the app fail to load, the held forms are
 * submitted as they would be without JavaScript.
 */
function holdSubmitsUntil(ready: Promise<unknown>): void {
  const held = new Set<HTMLFormElement>();
  const hold = (event: Event) => {
    const { target } = event;
    // `submit` comes from the form; `invalid` (which does not bubble: hence the capture) from a control.
    const form = target instanceof HTMLFormElement ? target : (target as { form?: HTMLFormElement | null } | null)?.form;
    if (!form) return;
    event.preventDefault();
    held.add(form);
  };
  document.addEventListener('submit', hold, true);
  document.addEventListener('invalid', hold, true);
  const release = () => {
    document.removeEventListener('submit', hold, true);
    document.removeEventListener('invalid', hold, true);
    // A task later, so the app's first update after hydration (the form turning off browser validation) is in.
    window.setTimeout(() => {
      for (const form of held) if (form.isConnected) form.requestSubmit();
      held.clear();
    }, 0);
  };
  ready.then(release, release);
}

const app = new Promise<void>((resolve) => afterFirstContentfulPaint(resolve))
  .then(() => import('./app/start.js'))
  .then(({ mounted }) => mounted);
holdSubmitsUntil(app);
