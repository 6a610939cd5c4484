import { emailContent, requiredStatements, siteContent } from '../../shared/site/content.js';
import type { NewVersion } from './versions.js';
import type { ListRecord } from '../db/lists.js';
import { amountBands, fillOffering, listStatements, offeringContent, offeringPath, STATEMENTS_HEADING, type ListKind } from '../../shared/lists/contract.js';

/**
 * The texts kept besides the prerendered pages and the e-mails (docs/decisions/055): the consent
 * statement a signup agrees to and the legends every page and e-mail carries, each as a plain-text
 * document built from src/shared/site/content.ts and the settings that change what a person is told.
 */

/** The consent settings (content.ts `consent`, or a test's) and whether double opt-in is on. */
export interface StatementSettings {
  consent: { version: string; checkbox: string | null };
  confirmation: 'off' | 'required';
}

/** The consent statement: what the form shows and asks, in the words shown. */
export function consentStatement({ consent, confirmation }: StatementSettings): NewVersion {
  const { form, helperText, thanks } = siteContent;
  const lines = [
    `Consent statement, version ${consent.version}`,
    '',
    consent.checkbox === null
      ? 'No checkbox: submitting the waitlist form is the consent to join it.'
      : `Checkbox the visitor must tick to join: "${consent.checkbox}"`,
    `Form: a field labelled "${form.label}" (placeholder "${form.placeholder}") and the button "${form.submit}".`,
    `Shown with the form: "${helperText}"`,
    confirmation === 'required'
      ? `Double opt-in: on. After joining: "${thanks.checkInbox}" The entry counts once the e-mailed link is confirmed.`
      : 'Double opt-in: off. The entry counts when the form is submitted.',
  ];
  return { kind: 'statement', name: 'consent', parts: { 'statement.txt': `${lines.join('\n')}\n` } };
}

/** The legends: the portal's name and registration line, the regulatory statements, where it is, the sender's address. */
export function legends(): NewVersion {
  const { city, legalUrl, footer } = siteContent;
  const lines = [
    ...requiredStatements(),
    `${footer.cityLabel} ${city}`,
    `${footer.legalLinkText}: ${legalUrl}`,
    `E-mails are sent from: ${emailContent.postalAddress}`,
  ];
  return { kind: 'legends', name: 'footer', parts: { 'legends.txt': `${lines.join('\n')}\n` } };
}

/**
 * An offering list's page (issue 31) as a plain-text document: the issuer's name and description,
 * the form's words, the amount bands with their non-binding label and note, and where the
 * statements stand. Every change of a list's texts is a new version.
 */
export function offeringPage(list: ListRecord): NewVersion {
  const fill = (text: string) => fillOffering(text, { issuer: list.name, productName: siteContent.productName });
  const { form, amount } = offeringContent;
  const bands = amountBands(list.bands);
  const lines = [
    `Offering page ${offeringPath(list.slug)} (${list.kind})`,
    '',
    fill(offeringContent.kicker),
    `Issuer: ${list.name}`,
    `Description: ${list.description}`,
    `Form: a field labelled "${form.label}" (placeholder "${form.placeholder}") and the button "${form.submit}".`,
    bands.length === 0
      ? 'Intended amount: not asked.'
      : `Intended amount: "${amount.legend}", choices "${amount.none}", ${bands.map((b) => `"${b.label}"`).join(', ')}. Note: "${amount.note}" Link: "${amount.educationLink}" (${siteContent.legalUrl}).`,
    `Beside the form, under "${STATEMENTS_HEADING}": the ${list.kind} statements (their own version).`,
    `When closed: "${fill(offeringContent.closed.title)}: ${fill(offeringContent.closed.message)}"`,
  ];
  return { kind: 'page', name: `offerings/${list.slug}`, parts: { 'page.txt': `${lines.join('\n')}\n` } };
}

/** The statements a list's kind carries (17 CFR 227.206 for testing the waters), on its page and in its e-mails. */
export function offeringStatements(kind: ListKind): NewVersion {
  const lines = [STATEMENTS_HEADING, '', ...listStatements(kind)];
  return { kind: 'statement', name: kind, parts: { 'statement.txt': `${lines.join('\n')}\n` } };
}
