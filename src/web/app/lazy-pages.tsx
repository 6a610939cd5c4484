import { lazy, type ComponentType } from 'react';
import { PageLoading } from './PageLoading.js';

// Admin and auth code is never part of the landing page's JavaScript: it loads on demand in the browser.
// The server build does not include it at all (`import.meta.env.SSR` is a build-time constant): there
// these routes prerender as their loading shell, which the browser renders over instead of hydrating it
// (see entry-client.tsx).
export const AuthPage: ComponentType = import.meta.env.SSR ? PageLoading : lazy(() => import('../auth/AuthPage.js'));

export const AdminPage: ComponentType = import.meta.env.SSR ? PageLoading : lazy(() => import('../admin/AdminPage.js'));

// The e-mail link pages are prerendered and hydrated like the landing page, but their code (the Radix
// dialog included) loads only on their own routes. Hydrating, React keeps the prerendered HTML on screen
// until the page's code has arrived, so nothing flashes.
export const ConfirmPage = lazy(() => import('../pages/ConfirmPage.js'));

export const PreferencesPage = lazy(() => import('../pages/PreferencesPage.js'));
