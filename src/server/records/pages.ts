import fs from 'node:fs/promises';
import path from 'node:path';
import { LINK_RESULT_FILES, PAGES, SIGNUP_ERROR_FILE, THANKS_CHECK_INBOX } from '../../shared/site/pages.js';
import type { NewVersion } from './versions.js';

/**
 * The prerendered files a visitor or a recipient can be shown, archived as served: every page but
 * the admin's own (/auth, /admin), the thanks page's double opt-in variant, and the script-free
 * answer templates (their `{{title}}` and `{{message}}` kept: the texts filled in are content.ts's).
 */
export const ARCHIVED_PAGE_FILES: readonly string[] = [
  ...Object.values(PAGES)
    .filter((page) => !page.clientOnly)
    .map((page) => page.file),
  THANKS_CHECK_INBOX.file,
  SIGNUP_ERROR_FILE,
  ...Object.values(LINK_RESULT_FILES),
];

/**
 * The archived pages of the web build in `webRoot`, as versions to store at start (the server serves
 * these bytes until it stops), by file. A file the build lacks (no build at all in development and
 * most tests) is left out.
 */
export async function readArchivedPages(webRoot: string): Promise<Map<string, NewVersion>> {
  const pages = new Map<string, NewVersion>();
  for (const file of ARCHIVED_PAGE_FILES) {
    let html: string;
    try {
      html = await fs.readFile(path.join(webRoot, file), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw err;
    }
    pages.set(file, { kind: 'page', name: file, parts: { 'page.html': html } });
  }
  return pages;
}
