import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { parseJsonObject, toIsoTimestamp } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { MAX_EMAIL_LENGTH } from '../../shared/waitlist/email.js';

export type AuditAction = 'sign_in' | 'sign_in_failed' | 'sign_out' | 'export' | 'delete';

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

/** Appends one audit entry. The actor's address is cut to the longest one an account can have. */
export async function recordAudit(db: Kysely<Database>, input: AuditInput): Promise<void> {
  await db
    .insertInto('audit_log')
    .values({
      id: randomUUID(),
      created_at: new Date().toISOString(),
      action: input.action,
      actor_email: input.actorEmail === null ? null : input.actorEmail.slice(0, MAX_EMAIL_LENGTH),
      actor_id: input.actorId,
      ip_address: input.ip,
      detail: JSON.stringify(input.detail ?? {}),
    })
    .execute();
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
