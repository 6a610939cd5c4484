import type { PageName } from '../../shared/site/pages.js';
import { siteContent } from '../../shared/site/content.js';

/** A document title: the page's own words, then the product name. */
export function documentTitle(words: string): string {
  return `${words} · ${siteContent.productName}`;
}

/** The document title of a page (the same in the prerendered HTML and in the browser). */
export function pageTitle(page: PageName): string {
  return documentTitle(siteContent.pageTitles[page]);
}
