/**
 * Every page of the site, in one table: read by the React router, the server's page routes and the
 * prerender script. A page's title is the web app's wording: `pageTitles` in src/shared/site/content.ts,
 * keyed by the page's name here.
 */
export interface Page {
  /** The route; null for the not-found page, which answers every path no other page has. */
  path: string | null;
  /** The prerendered HTML file of the web build that the server sends for this page. */
  file: string;
  /** Page code loaded on demand: prerendered as its loading shell, rendered (not hydrated) in the browser. */
  clientOnly: boolean;
}

export const PAGES = {
  home: { path: '/', file: 'index.html', clientOnly: false },
  thanks: { path: '/thanks', file: 'thanks.html', clientOnly: false },
  /** The double opt-in link's page (src/shared/waitlist/consent-contract.ts): a Confirm button. */
  confirm: { path: '/confirm', file: 'confirm.html', clientOnly: false },
  /** Every e-mail's "unsubscribe or erase" link, and the List-Unsubscribe URL. */
  preferences: { path: '/unsubscribe', file: 'unsubscribe.html', clientOnly: false },
  /** The erasure link, e-mailed when the preferences page asks for it. */
  erase: { path: '/erase', file: 'erase.html', clientOnly: false },
  auth: { path: '/auth', file: 'auth.html', clientOnly: true },
  admin: { path: '/admin', file: 'admin.html', clientOnly: true },
  notFound: { path: null, file: '404.html', clientOnly: false },
} as const satisfies Record<string, Page>;

export type PageName = keyof typeof PAGES;

export const PAGE_NAMES = Object.keys(PAGES) as PageName[];

/** Not a page of its own: the script-free template the server fills in when a form-post signup fails. */
export const SIGNUP_ERROR_FILE = 'signup-error.html';

/**
 * The thanks page as the server sends it when double opt-in is on (SIGNUP_CONFIRMATION=required): the
 * same page plus the check-inbox line, with this `<meta>` in its head so the browser hydrates it with
 * that line too.
 */
export const THANKS_CHECK_INBOX = {
  file: 'thanks-confirm.html',
  meta: { name: 'signup-confirmation', content: 'required' },
} as const;

/**
 * Not pages of their own: the script-free templates the server fills in (`{{title}}`, `{{message}}`,
 * HTML-escaped) to answer the no-JavaScript forms of the e-mail link pages (/confirm, /unsubscribe, /erase).
 */
export const LINK_RESULT_FILES = { success: 'link-success.html', error: 'link-error.html' } as const;
export type LinkResultTone = keyof typeof LINK_RESULT_FILES;

function normalize(pathname: string): string {
  return pathname.length > 1 ? pathname.replace(/\/+$/, '') : pathname;
}

/** The page a browser shows at `pathname` (a trailing slash is ignored). */
export function pageAt(pathname: string): PageName {
  const path = normalize(pathname);
  return PAGE_NAMES.find((name) => PAGES[name].path === path) ?? 'notFound';
}
