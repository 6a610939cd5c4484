import { lazy, type ComponentType } from 'react';
import type { PageName } from '../../shared/site/pages.js';
import { preloadableLazy, type PreloadableComponent } from '../ui/preloadable-lazy.js';
import { PageLoading } from './PageLoading.js';

// Admin and auth code is never part of the landing page's JavaScript: it loads on demand in the browser.
// The server build does not include it at all (`import.meta.env.SSR` is a build-time constant): there
// these routes prerender as their loading shell, which the browser renders over instead of hydrating it
// (see entry-client.tsx).
// In the browser, start.tsx preloads the page's code before the first render (see preloadableLazy).
const authPage = import.meta.env.SSR ? null : preloadableLazy(() => import('../auth/AuthPage.js'));
const adminPage = import.meta.env.SSR ? null : preloadableLazy(() => import('../admin/AdminPage.js'));

export const AuthPage: ComponentType = authPage ?? PageLoading;

export const AdminPage: ComponentType = adminPage ?? PageLoading;

/** The client-only pages' code, to load before they render (nothing to load elsewhere). */
export function preloadPage(page: PageName): Promise<void> {
  const component: PreloadableComponent<object> | null = page === 'admin' ? adminPage : page === 'auth' ? authPage : null;
  return component ? component.preload() : Promise.resolve();
}

// The e-mail link pages are prerendered and hydrated like the landing page, but their code (the Radix
// dialog included) loads only on their own routes. Hydrating, React keeps the prerendered HTML on screen
// until the page's code has arrived, so nothing flashes.
export const ConfirmPage = lazy(() => import('../pages/ConfirmPage.js'));

export const PreferencesPage = lazy(() => import('../pages/PreferencesPage.js'));

export const ErasePage = lazy(() => import('../pages/ErasePage.js'));
