import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { parseJsonObject, toIsoTimestamp } from '../db/database.js';
import type { Database } from '../db/schema.js';
import type { SecretBox } from '../crypto/secret-box.js';
import { MAX_EMAIL_LENGTH } from '../../shared/waitlist/email.js';

export type AuditAction =
  | 'sign_in'
  | 'sign_in_failed'
  // A sign-in refused by a limit (429); detail.reason says which.
  | 'sign_in_refused'
  | 'sign_out'
  // The CLI's unlock (sign-in counters cleared) and sessions --revoke.
  | 'unlock'
  | 'session_revoked'
  | 'export'
  | 'delete'
  // Launch invites queued from the admin (counts only).
  | 'invite'
  // An offering list created or changed (issue 31; src/server/lists): its slug and what changed.
  | 'list.create'
  | 'list.update'
  // A person erased their waitlist entry from an e-mail's link (detail: a keyed hash, never the address).
  | 'waitlist.erased_by_subject'
  // An erased or unsubscribed address came back through the link e-mailed to it (consent/restore.ts; a keyed hash).
  | 'waitlist.restored_by_subject'
  // TOTP factors (auth/mfa.ts): enrolment, a verified or refused code, removal, the CLI's reset-mfa.
  | 'mfa_enroll'
  | 'mfa_verify'
  | 'mfa_verify_failed'
  // Wrong codes (security review, finding 1): a challenge used up, the account's verification locked
  // for the hour or refused while locked, the warning e-mail queued.
  | 'mfa_challenge_exhausted'
  | 'mfa_locked'
  | 'mfa_verify_refused'
  | 'mfa_alert_queued'
  | 'mfa_unenroll'
  | 'mfa_reset'
  // The admin queued failed outbox messages again (src/server/mail/admin-routes.ts).
  | 'mail_retry'
  // A cap held back a confirmation e-mail (mail/caps.ts): the cap and the message, never the address; once per cap and window.
  | 'mail_capped'
  // Held signups (no valid proof-of-work solution) approved or rejected by an admin (challenge/held-routes.ts).
  | 'held_approve'
  | 'held_reject'
  // `npm run admin -- rotate-secret`: every sealed value re-sealed with a new AUTH_SECRET_KEY.
  | 'secret_rotated'
  // The examiner's bundle of kept texts downloaded from the admin (src/server/records; detail: the period).
  | 'records_export'
  // API keys (src/server/api): made, revoked, and their uses that change data (a signup; their
  // exports are 'export' records with detail.api_key_id). Never the key, never an address.
  | 'api_key_created'
  | 'api_key_revoked'
  | 'api_signup'
  // Webhook endpoints (src/server/webhooks/manage.ts): the endpoint's id and origin, never its secret or path.
  | 'webhook_created'
  | 'webhook_enabled'
  | 'webhook_disabled'
  | 'webhook_removed'
  | 'webhook_secret_rotated'
  | 'webhook_replayed'
  // An admin's role changed (CLI set-role, or an owner in /admin): detail { admin_id, from, to, by }.
  | 'role_changed';

export interface AuditInput {
  action: AuditAction;
  actorEmail: string | null;
  actorId: string | null;
  ip: string | null;
  /** Small JSON-serialisable context, e.g. `{ count: 3, scope: 'selected' }`. Never secrets. */
  detail: Record<string, unknown>;
}

export interface AuditEntry extends AuditInput {
  id: string;
  createdAt: string;
}

/**
 * Appends one audit entry (with `id`, a new one unless given) and resolves to its id. The actor's
 * address is cut to the longest one an account can have.
 */
export async function recordAudit(db: Kysely<Database>, input: AuditInput, id: string = randomUUID()): Promise<string> {
  await db
    .insertInto('audit_log')
    .values({
      id,
      created_at: new Date().toISOString(),
      action: input.action,
      actor_email: input.actorEmail === null ? null : input.actorEmail.slice(0, MAX_EMAIL_LENGTH),
      actor_id: input.actorId,
      ip_address: input.ip,
      detail: JSON.stringify(input.detail ?? {}),
    })
    .execute();
  return id;
}

/** The latest entries, newest first. */
export async function listAudit(db: Kysely<Database>, limit: number): Promise<AuditEntry[]> {
  const n = Math.max(1, Math.min(10_000, Math.floor(limit) || 50));
  const rows = await db
    .selectFrom('audit_log')
    .selectAll()
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(n)
    .execute();
  return rows.map((r) => ({
    id: r.id,
    createdAt: toIsoTimestamp(r.created_at),
    action: r.action as AuditAction,
    actorEmail: r.actor_email,
    actorId: r.actor_id,
    ip: r.ip_address,
    detail: parseJsonObject(r.detail),
  }));
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** Deletes the entries older than `retentionDays`; returns how many went. */
export async function purgeExpiredAudit(db: Kysely<Database>, retentionDays: number, now = Date.now()): Promise<number> {
  const cutoff = new Date(now - retentionDays * DAY_MS).toISOString();
  const result = await db.deleteFrom('audit_log').where('created_at', '<', cutoff).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Applies the retention now and then once a day. The returned function stops the timer (the app
 * calls it on close); the timer never keeps the process alive on its own.
 */
export async function startAuditRetention(
  db: Kysely<Database>,
  retentionDays: number,
  onError: (err: unknown) => void,
): Promise<() => void> {
  await purgeExpiredAudit(db, retentionDays);
  const timer = setInterval(() => {
    purgeExpiredAudit(db, retentionDays).catch(onError);
  }, DAY_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** The keyed hash that stands for an e-mail address in audit details (never the address itself). */
export function auditEmailHash(box: Pick<SecretBox, 'hmac'>, email: string): string {
  return box.hmac(email.trim().toLowerCase(), 'audit:email');
}
