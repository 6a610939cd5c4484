import { describe, expect, it } from 'vitest';
import { renderWaitlistEmailForRecords, RECORDED_EMAIL_TEMPLATES } from '../../../src/server/consent/index.js';
import { requiredStatements } from '../../../src/shared/site/content.js';
import { visibleText } from '../../support/visible-text.js';

/**
 * Statements that cannot be lost (issue 30): the portal's name, its registration line and the
 * legends in every e-mail template, in the plain text and in the HTML (the pages:
 * tests/build/required-statements.test.ts, on the web build).
 */
describe('every e-mail template carries the required statements', () => {
  it.each(RECORDED_EMAIL_TEMPLATES)('%s', async (template) => {
    const mail = await renderWaitlistEmailForRecords(template, { publicUrl: 'https://waitlist.example.com', confirmationLinkTtlSeconds: 72 * 3600 });
    const text = mail.text.replace(/\s+/g, ' ');
    const html = visibleText(mail.html);
    for (const statement of requiredStatements()) {
      expect(text, `${template}.txt`).toContain(statement);
      expect(html, `${template}.html`).toContain(statement);
    }
  });
});
