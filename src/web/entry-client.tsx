import './styles.css';
import { StrictMode } from 'react';
import { createRoot, hydrateRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router';
import { App } from './app/App.js';
import { isClientOnlyPath } from './app/paths.js';

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
if (container.firstElementChild && !isClientOnlyPath(window.location.pathname)) hydrateRoot(container, app);
else createRoot(container).render(app);
