import fs from 'node:fs/promises';
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { LINK_RESULT_FILES, PAGES, SIGNUP_ERROR_FILE, THANKS_CHECK_INBOX } from '../../shared/site/pages.js';
import { storeVersion } from './versions.js';

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
 * Stores the version of each archived page of the web build in `webRoot` (at start: the server
 * serves these bytes until it stops) and resolves to file → version id. A file the build lacks
 * (no build at all in development and most tests) is left out.
 */
export async function archivePages(db: Kysely<Database>, webRoot: string, now: Date = new Date()): Promise<Map<string, string>> {
  const versions = new Map<string, string>();
  for (const file of ARCHIVED_PAGE_FILES) {
    let html: string;
    try {
      html = await fs.readFile(path.join(webRoot, file), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw err;
    }
    versions.set(file, await storeVersion(db, { kind: 'page', name: file, parts: { 'page.html': html } }, now));
  }
  return versions;
}
