/**
 * What other features take from consent (the declared interface; the import-graph check lets them
 * import nothing else of consent/): the e-mails a signup queues with its entry and the invite the
 * admin sends, the suppression hash a signup checks, and the hold of an erased or unsubscribed
 * address signing up again (restore.ts).
 */
export { confirmationMail, queueRequired, welcomeMail, type MailQueue } from './mail.js';
export { waitlistEmailMessage } from './emails/messages.js';
export { isSuppressed, suppressionHash, type SuppressionBox } from './suppression.js';
export { RECORDED_EMAIL_TEMPLATES, recordedEmailText, renderWaitlistEmailForRecords, WAITLIST_EMAIL_TEMPLATES, type RecordedEmailTemplate, type WaitlistEmailTemplate } from './emails/index.js';
export { holdReturningAddress, type HoldReason } from './restore.js';
