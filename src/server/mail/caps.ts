import type { SecretBox } from '../crypto/secret-box.js';
import { rateLimitAddress } from '../geolocation/ip.js';
import { hitUnlessOver, limitKey, type Limit, type LimitKind, type RateLimitStore } from '../rate-limit/index.js';
import type { TemplatedMessage } from './outbox.js';

/**
 * Caps on the e-mails a stranger can make us send (issue 28, "no mail bombing"; docs/email.md):
 * a message marked capped (the confirmation, the "confirm it's you" restore e-mail) is checked by
 * the worker just before it is sent, against counters shared by every instance (the rate-limit
 * store: Redis when REDIS_URL is set, else the database):
 *
 * - per recipient address (MAIL_CAP_PER_ADDRESS in 24 hours), per recipient domain and per client
 *   address that caused it (MAIL_CAP_PER_DOMAIN_HOURLY, MAIL_CAP_PER_CLIENT_HOURLY): past a cap the
 *   message is held back for good (failed, with the cap as its reason; one audit record per cap
 *   and window, without the address);
 * - a global hourly budget (MAIL_CONFIRMATION_BUDGET_HOURLY): past it the message is deferred,
 *   queued again for when the window ends, its reason shown in the outbox.
 *
 * Fixed windows starting at the first message counted, like every rate limit of the app: "3 in 24
 * hours" means none more until the 24 hours that began with the first one have passed.
 */

/** Where a capped message keeps its cap in the template data: `{ client }`, a keyed hash of the client address or null. */
export const CAP_FIELD = '$cap';

export interface MailCaps {
  /** Per recipient address, in 24 hours (MAIL_CAP_PER_ADDRESS). */
  perAddress: Limit | null;
  /** Per recipient domain, in an hour (MAIL_CAP_PER_DOMAIN_HOURLY). */
  perDomain: Limit | null;
  /** Per client address that caused the message, in an hour (MAIL_CAP_PER_CLIENT_HOURLY). */
  perClient: Limit | null;
  /** Capped messages sent by all instances together, in an hour (MAIL_CONFIRMATION_BUDGET_HOURLY). */
  hourlyBudget: Limit | null;
}

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

/** The caps of the settings; 0 turns one off. */
export function mailCaps(settings: { perAddress: number; perDomainHourly: number; perClientHourly: number; budgetHourly: number }): MailCaps {
  const limit = (max: number, windowMs: number) => (max > 0 ? { max, windowMs } : null);
  return {
    perAddress: limit(settings.perAddress, DAY_MS),
    perDomain: limit(settings.perDomainHourly, HOUR_MS),
    perClient: limit(settings.perClientHourly, HOUR_MS),
    hourlyBudget: limit(settings.budgetHourly, HOUR_MS),
  };
}

/** A keyed hash of the client address that caused a message (IPv6 grouped by /64, as the rate limits count), or null. */
export function mailClientKey(box: Pick<SecretBox, 'hmac'>, ip: string | null | undefined): string | null {
  return ip ? box.hmac(rateLimitAddress(ip), 'mail cap client v1').slice(0, 32) : null;
}

/** `message`, marked capped (with the client that caused it, when known). */
export function capped(message: TemplatedMessage, client: string | null): TemplatedMessage {
  return { ...message, data: { ...message.data, [CAP_FIELD]: { client } } };
}

/** The cap of a stored message's data, or null when it is not capped. */
function capOf(data: Record<string, unknown> | null): { client: string | null } | null {
  const cap = data?.[CAP_FIELD];
  if (typeof cap !== 'object' || cap === null) return null;
  const client = (cap as Record<string, unknown>).client;
  return { client: typeof client === 'string' && client !== '' ? client : null };
}

export type CapName = 'address' | 'domain' | 'client';

/** What the worker does with a message: send it, hold it back for good, or defer it until `until`. */
export type CapDecision =
  | { send: true }
  | { held: CapName; reason: string; /** The first message this cap held back in its window (audited). */ first: boolean }
  | { deferred: Date; reason: string };

const KINDS: Record<CapName, LimitKind> = { address: 'mail_address', domain: 'mail_domain', client: 'mail_client' };

function heldReason(cap: CapName, limit: Limit): string {
  const per = cap === 'address' ? `to one address in ${limit.windowMs / HOUR_MS} hours` : cap === 'domain' ? 'to one domain in an hour' : 'caused by one client address in an hour';
  return `Not sent: cap reached (at most ${limit.max} confirmation e-mails ${per})`;
}

export function deferredReason(limit: Limit): string {
  return `Deferred: the hourly budget of ${limit.max} confirmation e-mails is used up; sent when it frees`;
}

export type MailCapper = (message: { to: string; templateData: Record<string, unknown> | null }) => Promise<CapDecision>;

/**
 * The check the worker runs before sending a message: per-recipient caps read first (a message
 * they hold back costs no budget), then the budget counted (a deferred message is not counted
 * against its recipient: it will be when it goes), then the recipient's counters.
 */
export function createMailCapper(store: RateLimitStore, caps: MailCaps, now: () => Date): MailCapper {
  return async ({ to, templateData }) => {
    const cap = capOf(templateData);
    if (!cap) return { send: true };
    const address = to.trim().toLowerCase();
    const values: Record<CapName, string | null> = { address, domain: address.slice(address.lastIndexOf('@') + 1), client: cap.client };
    const checks: Array<{ name: CapName; key: string; limit: Limit }> = [];
    for (const [name, limit] of [['address', caps.perAddress], ['domain', caps.perDomain], ['client', caps.perClient]] as const) {
      const value = values[name];
      if (limit && value) checks.push({ name, key: limitKey(KINDS[name], value), limit });
    }
    for (const check of checks) {
      const state = await store.peek(check.key, check.limit);
      if (state.count >= check.limit.max) {
        const held = await store.hit(`mail_held:${check.key}`, check.limit);
        return { held: check.name, reason: heldReason(check.name, check.limit), first: held.count === 1 };
      }
    }
    if (caps.hourlyBudget) {
      const budget = await hitUnlessOver(store, 'mail_budget:confirmations', caps.hourlyBudget);
      if (budget.over) return { deferred: new Date(now().getTime() + Math.max(1000, budget.resetInMs)), reason: deferredReason(caps.hourlyBudget) };
    }
    for (const check of checks) await store.hit(check.key, check.limit);
    return { send: true };
  };
}
