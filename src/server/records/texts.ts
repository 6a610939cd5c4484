import { emailContent, requiredStatements, siteContent } from '../../shared/site/content.js';
import type { NewVersion } from './versions.js';

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
