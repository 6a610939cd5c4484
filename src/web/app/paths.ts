import { siteContent } from '../site/content.js';

/** Every route of the web app, in one place. */
export const paths = {
  home: '/',
  thanks: '/thanks',
  auth: '/auth',
  admin: '/admin',
} as const;

/** Routes whose page code is loaded on demand: prerendered as their loading shell only. */
export const clientOnlyPaths: readonly string[] = [paths.auth, paths.admin];

function normalize(pathname: string): string {
  return pathname.length > 1 ? pathname.replace(/\/+$/, '') : pathname;
}

/** The document title of a route (the same on the server and in the browser). */
export function titleForPath(pathname: string): string {
  const { pageTitles, productName } = siteContent;
  switch (normalize(pathname)) {
    case paths.home:
      return `${pageTitles.home} · ${productName}`;
    case paths.thanks:
      return `${pageTitles.thanks} · ${productName}`;
    case paths.auth:
      return `${pageTitles.auth} · ${productName}`;
    case paths.admin:
      return `${pageTitles.admin} · ${productName}`;
    default:
      return `${pageTitles.notFound} · ${productName}`;
  }
}

export function isClientOnlyPath(pathname: string): boolean {
  return clientOnlyPaths.includes(normalize(pathname));
}
