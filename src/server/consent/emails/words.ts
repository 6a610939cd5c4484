import { emailContent, requiredStatements, siteContent } from '../../../shared/site/content.js';

/**
 * The e-mails' words (src/shared/site/content.ts `emailContent`) with their placeholders filled:
 * `{productName}` always, `{hours}` where a template passes it. No React here: the signup path
 * imports this file for the subjects, the worker the templates.
 */
export const WAITLIST_EMAIL_TEMPLATES = ['confirmation', 'welcome', 'invite', 'erasure'] as const;
export type WaitlistEmailTemplate = (typeof WAITLIST_EMAIL_TEMPLATES)[number];
/** The "confirm it's you" e-mail to an erased or unsubscribed address entered again (restore.ts): on no list, so not a waitlist template. */
export const RESTORE_TEMPLATE = 'restore';
/** Every template the records archive (src/server/records): the waitlist's and the restore e-mail. */
export const RECORDED_EMAIL_TEMPLATES = [...WAITLIST_EMAIL_TEMPLATES, RESTORE_TEMPLATE] as const;
export type RecordedEmailTemplate = (typeof RECORDED_EMAIL_TEMPLATES)[number];

export function fill(text: string, values: Record<string, string | number> = {}): string {
  const all: Record<string, string | number> = { productName: siteContent.productName, ...values };
  // A callback, so a `$` in a value is never read as a replacement pattern.
  return text.replace(/\{(\w+)\}/g, (match, name: string) => (Object.hasOwn(all, name) ? String(all[name]) : match));
}

/** The subject a template's message is stored (and sent) with. */
export function waitlistEmailSubject(template: WaitlistEmailTemplate): string {
  return fill(emailContent[template].subject);
}

/**
 * Every e-mail's footer: why the person gets it, the manage link's words, the sender's postal
 * address, and the statements every page carries too (the registration line and the legends,
 * content.ts requiredStatements; the portal's name is the e-mail's header).
 */
export function footerWords() {
  const [productName, registration, ...legends] = requiredStatements();
  return {
    productName: productName!,
    reason: fill(emailContent.footer.reason),
    manage: fill(emailContent.footer.manage),
    postalAddress: fill(emailContent.postalAddress),
    registration: registration!,
    legends,
  };
}
