import type { Kysely } from 'kysely';
import { auditCounts, type AuditCounts } from '../audit/audit-counts.js';
import { recordAudit, type AuditInput } from '../audit/audit-log.js';
import type { Database } from '../db/schema.js';
import { memoryStore, type Limit, type RateLimitStore } from '../rate-limit/index.js';

/**
 * Rows one client address (an IPv6 client as its /64) may add to the audit log per day with
 * sign-ins that fail or are refused. Past them, its events of the day are counted into one record
 * per action and reason: the client's share of the log is bounded at SIGN_IN_AUDIT_ROWS_PER_CLIENT
 * + 3 rows a day, however long it keeps trying (security review, finding 2).
 */
export const SIGN_IN_AUDIT_ROWS_PER_CLIENT = 100;
const DAY_MS = 86_400_000;
const BUDGET: Limit = { max: SIGN_IN_AUDIT_ROWS_PER_CLIENT, windowMs: DAY_MS };

/** Which limit refused: per IP, per account and client, or the account's sign-in line being full (sign-in-line.ts). */
export type RefusalReason = 'ip_rate_limited' | 'account_rate_limited' | 'account_slowed';

export interface SignInEvent {
  /** The address tried, lower-cased, without control characters. */
  email: string;
  ip: string | null;
  /** The client as the limits count it (rateLimitAddress), '' when unknown. */
  client: string;
}

/**
 * The audit records of password sign-ins that fail or are refused (auth/service.ts):
 *
 * - A wrong password or unknown address is a `sign_in_failed` record of its own while its client's
 *   daily budget lasts.
 * - Refusals by a limit are one `sign_in_refused` record per client, reason and window of the limit,
 *   with a `count` of the refusals it stands for (audit/audit-counts.ts): the first refusal writes
 *   it, the others only count in memory, so a client looping on a refused sign-in costs no write
 *   per request.
 * - Past the budget, the client's failures and refusals of the day are counted into one record per
 *   action and reason, marked `over_budget`.
 */
export class SignInAudit {
  private readonly db: Kysely<Database>;
  private readonly now: () => number;
  private readonly counts: AuditCounts;
  /** Rows per client per day: a count in memory (a restart gives at most one more day's budget). */
  private readonly budget: RateLimitStore;

  constructor(db: Kysely<Database>, options: { now?: () => number; onError?: (err: unknown) => void } = {}) {
    this.db = db;
    this.now = options.now ?? Date.now;
    this.counts = auditCounts(db, { now: this.now, onError: options.onError });
    this.budget = memoryStore({ now: this.now });
  }

  /** A wrong password or an unknown address. */
  async failed(event: SignInEvent): Promise<void> {
    await this.note(event, null, { action: 'sign_in_failed', actorEmail: event.email, actorId: null, ip: event.ip, detail: { reason: 'invalid_credentials' } });
  }

  /** A sign-in refused by a limit whose window (for this client) ends at `endsAtMs`. */
  async refused(event: SignInEvent, reason: RefusalReason, endsAtMs: number): Promise<void> {
    await this.note(event, { key: `refused:${reason}:${event.client}`, endsAtMs }, { action: 'sign_in_refused', actorEmail: event.email, actorId: null, ip: event.ip, detail: { reason } });
  }

  /** Writes what is counted but not yet written; stops the timer. */
  close(): Promise<void> {
    return this.counts.close();
  }

  /** A record of its own (`counted` null) or counted per key until its window ends, within the client's budget. */
  private async note(event: SignInEvent, counted: { key: string; endsAtMs: number } | null, input: AuditInput): Promise<void> {
    if (counted && this.counts.count(counted.key)) return;
    const overKey = `over:${input.action}:${String(input.detail.reason)}:${event.client}`;
    if (this.counts.count(overKey)) return;
    const budget = await this.budget.hit(event.client, BUDGET);
    if (budget.count > BUDGET.max) {
      await this.counts.start(overKey, this.now() + budget.resetInMs, { ...input, detail: { ...input.detail, over_budget: true } });
    } else if (counted) {
      await this.counts.start(counted.key, counted.endsAtMs, input);
    } else {
      await recordAudit(this.db, input);
    }
  }
}
