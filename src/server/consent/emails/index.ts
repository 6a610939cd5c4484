import type { FastifyInstance } from 'fastify';
import type { RenderedMail, TemplateRenderer } from '../../mail/index.js';
import { createLinkToken, linkUrl } from '../links.js';
import { emailContent } from '../../../shared/site/content.js';
import {
  CONFIRM_PAGE_PATH,
  ERASE_LINK_TTL_MINUTES,
  ERASE_PAGE_PATH,
  LINK_TOKEN_PARAM,
  MANAGE_LINK_TTL_DAYS,
  ONE_CLICK_FIELD,
  ONE_CLICK_VALUE,
  PREFERENCES_PAGE_PATH,
  type LinkPurpose,
} from '../../../shared/waitlist/consent-contract.js';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { findEmailRecipient, type EmailRecipient } from './recipient.js';
import { registerRestoreEmail } from '../restore.js';
import type * as RenderModule from './render.js';
import { fill, offeringWords, WAITLIST_EMAIL_TEMPLATES, waitlistEmailSubject, type EmailOffering, type RecordedEmailTemplate, type WaitlistEmailTemplate } from './words.js';
import { listStatements, offeringPath } from '../../../shared/lists/contract.js';

export { waitlistEmailMessage } from './messages.js';
export { RECORDED_EMAIL_TEMPLATES, WAITLIST_EMAIL_TEMPLATES, waitlistEmailSubject, type RecordedEmailTemplate, type WaitlistEmailTemplate } from './words.js';

/**
 * The waitlist's e-mails (confirmation, welcome, invite, and the erasure link a person asks for),
 * rendered by the outbox worker when it sends them (docs/decisions/008): the row holds only
 * `{entryId}`, so each e-mail is built from the entry as it is then, with links signed then. A
 * message whose person has since been erased, or unsubscribed (but for the erasure link they asked
 * for), or (for a confirmation) confirmed already is not sent: `{skip}`.
 */

/**
 * Manage links (the footer's, and List-Unsubscribe: unsubscribe, ask for an erasure link) work this
 * long after sending (consent-contract.ts MANAGE_LINK_TTL_DAYS says why).
 */
export const MANAGE_LINK_TTL_SECONDS = MANAGE_LINK_TTL_DAYS * 24 * 60 * 60;
/** Erasure links work this long after sending. */
export const ERASE_LINK_TTL_SECONDS = ERASE_LINK_TTL_MINUTES * 60;

type Views = typeof RenderModule;
/** The React templates, imported on the first send (see render.tsx). */
let views: Promise<Views> | null = null;
function loadViews(): Promise<Views> {
  views ??= import('./render.js').catch((err: unknown) => {
    views = null;
    throw err;
  });
  return views;
}

/** What a template's links and words depend on: each recipient's links, and the settings. */
interface TemplateInputs {
  /** An offering list's e-mail (issue 31): its issuer and statements. */
  offering?: EmailOffering | undefined;
  manage: string;
  confirm: () => string;
  erase: () => string;
  publicUrl: string;
  confirmationLinkTtlSeconds: number;
}

async function renderBodies(template: WaitlistEmailTemplate, inputs: TemplateInputs): Promise<RenderModule.RenderedBodies> {
  const render = await loadViews();
  const { manage: manageUrl, offering } = inputs;
  switch (template) {
    case 'confirmation':
      return render.renderConfirmationEmail({ confirmUrl: inputs.confirm(), manageUrl, offering, hours: Math.round(inputs.confirmationLinkTtlSeconds / 3600) });
    case 'welcome':
      return render.renderWelcomeEmail({ manageUrl, offering });
    case 'erasure':
      return render.renderErasureEmail({ eraseUrl: inputs.erase(), manageUrl });
    case 'invite':
      return render.renderInviteEmail({ inviteUrl: new URL(offering?.url ?? emailContent.invite.url, inputs.publicUrl).toString(), manageUrl, offering });
  }
}

/** An offering list's entry (issue 31): its e-mails name the issuer and carry the statements; the portal's none. */
function offeringOf(entry: EmailRecipient): EmailOffering | undefined {
  return entry.listKind === 'portal' ? undefined : { issuer: entry.listName, statements: listStatements(entry.listKind), url: offeringPath(entry.listSlug) };
}

/**
 * Which text an e-mail to `entryId` was sent from, for the records: the template as the portal's
 * list sends it (`key` the template's name), or as an offering list's (`key` is `offerings/SLUG/template`, and
 * `offering` is what renderWaitlistEmailForRecords renders it with). Undefined when the entry is gone.
 */
export async function recordedEmailText(
  db: Kysely<Database>,
  template: RecordedEmailTemplate,
  entryId: string | null,
): Promise<{ key: string; offering?: EmailOffering } | undefined> {
  if (template === 'restore' || template === 'erasure' || entryId === null) return { key: template };
  const entry = await findEmailRecipient(db, entryId);
  if (!entry) return undefined;
  const offering = offeringOf(entry);
  return offering ? { key: `offerings/${entry.listSlug}/${template}`, offering } : { key: template };
}

/** Stands for each recipient's own signed token in a template's archived version (src/server/records). */
export const RECIPIENT_TOKEN_PLACEHOLDER = '{recipient-token}';

/**
 * A template as every recipient gets it, with a placeholder where each recipient's link token goes
 * (no address is in a body): the text the records archive as the template's version (issue 30).
 * The same code as the send, so a change of the words, the layout or a setting the words show (the
 * confirmation link's hours) is a new version.
 */
export async function renderWaitlistEmailForRecords(
  template: RecordedEmailTemplate,
  settings: { publicUrl: string; confirmationLinkTtlSeconds: number },
  offering?: EmailOffering,
): Promise<{ subject: string; text: string; html: string }> {
  const placeholder = (path: string) => `${new URL(path, settings.publicUrl).toString()}?${LINK_TOKEN_PARAM}=${RECIPIENT_TOKEN_PLACEHOLDER}`;
  if (template === 'restore') {
    // As registerRestoreEmail renders it, with the restore token's place held.
    const restore = await (await loadViews()).renderRestoreEmail({ restoreUrl: placeholder(CONFIRM_PAGE_PATH), hours: Math.round(settings.confirmationLinkTtlSeconds / 3600) });
    return { subject: fill(emailContent.restore.subject), text: restore.text, html: restore.html };
  }
  const bodies = await renderBodies(template, {
    offering: template === 'erasure' ? undefined : offering,
    manage: placeholder(PREFERENCES_PAGE_PATH),
    confirm: () => placeholder(CONFIRM_PAGE_PATH),
    erase: () => placeholder(ERASE_PAGE_PATH),
    ...settings,
  });
  const subject = offering && template !== 'erasure' ? offeringWords(template, offering).subject : waitlistEmailSubject(template);
  return { subject, text: bodies.text, html: bodies.html };
}

/** By app.mail: the same object in every plugin scope of one app. */
const registered = new WeakSet<object>();

/**
 * Registers the renderers with app.mail.registerTemplate. Called by the consent routes;
 * idempotent per app, and does nothing when e-mail is off (PUBLIC_URL is then not required).
 */
export function registerWaitlistEmails(app: FastifyInstance): void {
  if (!app.mail.enabled || registered.has(app.mail)) return;
  const publicUrl = app.config.publicUrl;
  // loadConfig requires PUBLIC_URL with SMTP_URL; this only guards a hand-made config.
  if (!publicUrl) throw new Error('waitlist e-mails need PUBLIC_URL: links are built on it');
  registered.add(app.mail);
  const { db } = app.database;
  const { confirmationLinkTtlSeconds } = app.config.consent;

  const renderer =
    (template: WaitlistEmailTemplate): TemplateRenderer =>
    async (data, message): Promise<RenderedMail | { skip: string }> => {
      const entry = await findEmailRecipient(db, data.entryId);
      if (!entry) return { skip: 'the recipient is no longer on the waitlist' };
      if (entry.email.toLowerCase() !== message.to.toLowerCase()) return { skip: "the entry's address is not the one this message was queued for" };
      if (entry.status === 'unsubscribed' && template !== 'erasure') return { skip: 'the recipient unsubscribed' };
      // Nothing is queued for a held signup (challenge/hold.ts); should anything be, it is not sent.
      if (entry.status === 'held') return { skip: 'the signup is held for review' };
      if (template === 'confirmation' && entry.status !== 'pending') return { skip: `the address no longer awaits confirmation (${entry.status})` };

      const now = Math.floor(Date.now() / 1000);
      const link = (path: string, purpose: LinkPurpose, ttlSeconds: number) =>
        linkUrl(publicUrl, path, createLinkToken(app.secretBox, { entryId: entry.id, purpose, expiresAt: now + ttlSeconds }));
      const manageUrl = link(PREFERENCES_PAGE_PATH, 'manage', MANAGE_LINK_TTL_SECONDS);
      const offering = template === 'erasure' ? undefined : offeringOf(entry);
      const bodies = await renderBodies(template, {
        offering,
        manage: manageUrl,
        confirm: () => link(CONFIRM_PAGE_PATH, 'confirm', confirmationLinkTtlSeconds),
        erase: () => link(ERASE_PAGE_PATH, 'erase', ERASE_LINK_TTL_SECONDS),
        publicUrl,
        confirmationLinkTtlSeconds,
      });
      return {
        subject: offering && template !== 'erasure' ? offeringWords(template, offering).subject : waitlistEmailSubject(template),
        text: bodies.text,
        html: bodies.html,
        // RFC 8058 one-click unsubscribe: the provider POSTs `List-Unsubscribe=One-Click` to the URL.
        // Not on the erasure link: the person's own request, not a mailing.
        headers:
          template === 'erasure' ? {} : { 'List-Unsubscribe': `<${manageUrl}>`, 'List-Unsubscribe-Post': `${ONE_CLICK_FIELD}=${ONE_CLICK_VALUE}` },
      };
    };

  for (const template of WAITLIST_EMAIL_TEMPLATES) app.mail.registerTemplate(template, renderer(template));
  registerRestoreEmail(app, publicUrl, loadViews);
}
