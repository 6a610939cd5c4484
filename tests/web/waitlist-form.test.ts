import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { afterEach, describe, expect, it } from 'vitest';
import { siteContent } from '../../src/shared/site/content.js';
import { CONSENT_FIELD } from '../../src/shared/waitlist/signup-contract.js';
import { StaticRouter } from '../../src/web/site/router.js';
import { WaitlistForm } from '../../src/web/waitlist/WaitlistForm.js';

/** The landing form as prerendered (no JavaScript yet): the consent box only when content.ts has a text. */
function formMarkup(): string {
  return renderToStaticMarkup(createElement(StaticRouter, { location: '/', children: createElement(WaitlistForm) }));
}

describe('the waitlist form\'s consent checkbox', () => {
  const original = siteContent.consent.checkbox;
  afterEach(() => {
    siteContent.consent.checkbox = original;
  });

  it('is absent with the default content (the spec\'s form)', () => {
    expect(original).toBeNull();
    const html = formMarkup();
    expect(html).not.toContain('type="checkbox"');
    expect(html).not.toContain(`name="${CONSENT_FIELD}"`);
  });

  it('with a consent text: a required checkbox named consent inside its label, so the form posts it without JavaScript', () => {
    siteContent.consent.checkbox = 'I agree to the privacy policy.';
    const html = formMarkup();
    const label = /<label[^>]*>(<input[^>]*>)<span>I agree to the privacy policy\.<\/span><\/label>/.exec(html);
    expect(label, html).not.toBeNull();
    const input = label![1]!;
    expect(input).toContain('type="checkbox"');
    expect(input).toContain(`name="${CONSENT_FIELD}"`);
    expect(input).toMatch(/\srequired=""/);
    // The rest of the form is the default one plus the box.
    siteContent.consent.checkbox = null;
    expect(html.replace(label![0], '')).toBe(formMarkup());
  });
});
