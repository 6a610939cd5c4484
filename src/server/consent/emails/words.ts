import { emailContent, requiredStatements, siteContent } from '../../../shared/site/content.js';
import { fillOffering, offeringContent } from '../../../shared/lists/contract.js';

/**
 * An offering list's e-mail (issue 31): the issuer it is about and the statements of the list's
 * kind (17 CFR 227.206), which the layout shows under the body; the words are offeringContent.email's.
 */
export interface EmailOffering {
  issuer: string;
  statements: readonly string[];
  /** Where the invite's button leads (the list's page); the portal's invite URL without it. */
  url?: string | undefined;
}

/** An offering e-mail's words ({issuer}, {productName} filled). */
export function offeringWords<T extends 'confirmation' | 'welcome' | 'invite'>(template: T, offering: EmailOffering): (typeof offeringContent.email)[T] {
  const words = offeringContent.email[template];
  return Object.fromEntries(
    Object.entries(words).map(([key, value]) => [key, fillOffering(value as string, { issuer: offering.issuer, productName: siteContent.productName })]),
  ) as (typeof offeringContent.email)[T];
}

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
export function footerWords(offering?: EmailOffering) {
  const [productName, registration, ...legends] = requiredStatements();
  return {
    productName: productName!,
    reason: offering ? fillOffering(offeringContent.email.reason, { issuer: offering.issuer, productName: productName! }) : fill(emailContent.footer.reason),
    manage: fill(emailContent.footer.manage),
    postalAddress: fill(emailContent.postalAddress),
    registration: registration!,
    legends,
  };
}
