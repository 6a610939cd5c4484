import type { ReactElement } from 'react';
import { render, toPlainText } from '@react-email/render';
import { ConfirmationEmail, type ConfirmationEmailProps } from './ConfirmationEmail.js';
import { ErasureEmail, type ErasureEmailProps } from './ErasureEmail.js';
import { InviteEmail, type InviteEmailProps } from './InviteEmail.js';
import { RestoreEmail, type RestoreEmailProps } from './RestoreEmail.js';
import { WelcomeEmail, type WelcomeEmailProps } from './WelcomeEmail.js';

/**
 * HTML and plain text of each waitlist e-mail. Loaded on the first send only (index.ts imports it
 * lazily): @react-email/components pulls in its Tailwind compiler, about 0.6 s and 40 MB at import,
 * which neither the server's start nor the signup path should pay.
 */
export interface RenderedBodies {
  html: string;
  text: string;
}

/**
 * The text part is the HTML converted (html-to-text through @react-email/render, which skips the
 * preview line): headings keep their case, and a link reads "words <url>" (RFC 3986 appendix C's
 * delimiters, so no client takes the next word or a full stop into the address).
 */
const TEXT_OPTIONS = {
  selectors: [
    { selector: 'h1', options: { uppercase: false } },
    { selector: 'a', options: { linkBrackets: ['<', '>'] as [string, string], hideLinkHrefIfSameAsText: true } },
  ],
};

async function bodies(element: ReactElement): Promise<RenderedBodies> {
  // One React render; the text is made from its HTML.
  const html = await render(element);
  const text = `${toPlainText(html, TEXT_OPTIONS).replace(/\n{3,}/g, '\n\n').trim()}\n`;
  return { html, text };
}

export const renderConfirmationEmail = (props: ConfirmationEmailProps) => bodies(<ConfirmationEmail {...props} />);
export const renderWelcomeEmail = (props: WelcomeEmailProps) => bodies(<WelcomeEmail {...props} />);
export const renderInviteEmail = (props: InviteEmailProps) => bodies(<InviteEmail {...props} />);
export const renderErasureEmail = (props: ErasureEmailProps) => bodies(<ErasureEmail {...props} />);
export const renderRestoreEmail = (props: RestoreEmailProps) => bodies(<RestoreEmail {...props} />);
