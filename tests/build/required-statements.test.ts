import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ARCHIVED_PAGE_FILES } from '../../src/server/records/pages.js';
import { requiredStatements } from '../../src/shared/site/content.js';
import { visibleText } from '../support/visible-text.js';

/**
 * Statements that cannot be lost (issue 30), on the production build (`npm run build`): every page
 * a visitor or a recipient can be shown carries the portal's name, its registration line and the
 * legends (content.ts requiredStatements). The e-mails: tests/server/records/required-statements.test.ts.
 */
const WEB_ROOT = path.resolve('dist/web');

describe('every page carries the required statements', () => {
  it.each(ARCHIVED_PAGE_FILES)('%s', (file) => {
    const text = visibleText(fs.readFileSync(path.join(WEB_ROOT, file), 'utf8'));
    for (const statement of requiredStatements()) expect(text, file).toContain(statement);
  });
});
