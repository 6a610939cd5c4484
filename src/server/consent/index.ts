/**
 * What other features take from consent (the declared interface; the import-graph check lets them
 * import nothing else of consent/): the e-mails a signup queues with its entry and the invite the
 * admin sends, and the suppression hash a signup clears.
 */
export { confirmationMail, queueRequired, welcomeMail, type MailQueue } from './mail.js';
export { waitlistEmailMessage } from './emails/messages.js';
export { isSuppressed, suppressionHash, type SuppressionBox } from './suppression.js';
export { renderWaitlistEmailForRecords, WAITLIST_EMAIL_TEMPLATES, type WaitlistEmailTemplate } from './emails/index.js';
