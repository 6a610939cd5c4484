import type { Kysely } from 'kysely';
import type { SecretBox } from '../crypto/secret-box.js';
import type { Database } from '../db/schema.js';
import { setEndpointEnabled, signedHeaders, signingSecrets } from './endpoints.js';
import { claimDueDeliveries, failAbandonedDeliveries, releaseDeliveries, settleDelivery, type ClaimedDelivery } from './queue.js';
import { addressResolver, postOnce, type PostOutcome } from './safe-http.js';
import { createPassRunner } from '../runtime/pass-runner.js';

/**
 * The webhooks' sender, inside the server process (docs/decisions/057), like the mail worker: it
 * polls, claims due deliveries with a lease (several instances share the table safely), posts each
 * claim's deliveries at once (each bounded by the timeout), and records every outcome only while its
 * claim still holds the lease. Retries: exponential backoff with jitter, or the receiver's
 * Retry-After, until the retry window (about three days) after the delivery was queued.
 */

/** Delay before attempt `attempts + 1`: 30 s × 2^(attempts − 1), at most 12 h, with jitter (half to all of it). */
export function webhookBackoffMs(attempts: number, random: () => number = Math.random): number {
  const full = Math.min(12 * 3_600_000, 30_000 * 2 ** Math.max(0, attempts - 1));
  return Math.round(full * (0.5 + random() * 0.5));
}

/** Retry-After in milliseconds from `now` (seconds, or an HTTP date), or null when absent or unreadable. */
export function retryAfterMs(value: string | null, now: number): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

export interface WebhookWorkerLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface WebhookWorkerOptions {
  db: Kysely<Database>;
  box: Pick<SecretBox, 'open'>;
  log: WebhookWorkerLog;
  /** WEBHOOK_TIMEOUT_MS: the deadline of one attempt. */
  timeoutMs: number;
  /** WEBHOOK_ALLOW_PRIVATE: private, loopback and link-local addresses allowed (tests, an internal receiver). */
  allowPrivate: boolean;
  /** DNS_SERVERS: the servers the endpoints' names are resolved with; null: the system's resolver. */
  dnsServers: readonly string[] | null;
  /** WEBHOOK_RETRY_HOURS in ms: no attempt is scheduled later than this after the delivery was queued. */
  retryWindowMs: number;
  /** Called after the worker disabled an endpoint (410 Gone): the enqueue side refreshes what it knows. */
  onEndpointDisabled?: () => void;
  pollIntervalMs?: number;
  leaseMs?: number;
  /** Deliveries claimed (and posted at once) per pass: the bound on a pass's connections. */
  batchSize?: number;
  /** The scheduling clock (tests move it); the signature's timestamp is always the real time. */
  now?: () => Date;
  backoffMs?: (attempts: number) => number;
}

export interface WebhookWorker {
  start(): void;
  /** One pass now (after any pass under way); resolves to how many deliveries it claimed. */
  runOnce(): Promise<number>;
  /** Wakes the worker (after an enqueue or a replay in this process). */
  wake(): void;
  stop(): Promise<void>;
}

export function createWebhookWorker(options: WebhookWorkerOptions): WebhookWorker {
  const { db, box, log, timeoutMs, allowPrivate, retryWindowMs } = options;
  const pollIntervalMs = options.pollIntervalMs ?? 5_000;
  const leaseMs = options.leaseMs ?? Math.max(60_000, 2 * timeoutMs + 30_000);
  const batchSize = options.batchSize ?? 10;
  const now = options.now ?? (() => new Date());
  const backoffMs = options.backoffMs ?? ((attempts: number) => webhookBackoffMs(attempts));
  const resolve = addressResolver(options.dnsServers);

  const settle = async (delivery: ClaimedDelivery, outcome: Parameters<typeof settleDelivery>[2], what: string) => {
    if (!(await settleDelivery(db, delivery, outcome))) {
      log.warn({ id: delivery.id, attempts: delivery.attempts, outcome: what }, 'webhooks: the lease ran out during the attempt (or the delivery was removed); this outcome is discarded');
      return false;
    }
    return true;
  };

  async function deliver(delivery: ClaimedDelivery): Promise<void> {
    const endpoint = await db.selectFrom('webhook_endpoints').selectAll().where('id', '=', delivery.endpointId).executeTakeFirst();
    if (!endpoint || Number(endpoint.enabled) !== 1) {
      await settle(delivery, { status: 'failed', last_error: 'Not sent: the endpoint is disabled', finished_at: now().toISOString() }, 'not sent');
      return;
    }
    const sentAt = new Date();
    let outcome: PostOutcome;
    try {
      outcome = await postOnce(endpoint.url, {
        headers: {
          'content-type': 'application/json',
          'user-agent': 'waitlist-webhooks/1',
          ...signedHeaders(delivery.eventId, delivery.payload, signingSecrets(endpoint, box, sentAt), sentAt),
        },
        body: delivery.payload,
        timeoutMs,
        allowPrivate,
        resolve,
      });
    } catch (err) {
      // The secret does not open (AUTH_SECRET_KEY changed without its previous key): retried like an outage.
      outcome = { kind: 'failed', error: `Not sent: ${err instanceof Error ? err.message : String(err)}`.slice(0, 500), refused: false };
    }
    const at = now();
    const context = { id: delivery.id, endpoint: endpoint.id, attempts: delivery.attempts };
    if (outcome.kind === 'answered' && outcome.status >= 200 && outcome.status < 300) {
      if (await settle(delivery, { status: 'delivered', response_status: outcome.status, last_error: null, finished_at: at.toISOString() }, 'delivered')) {
        log.info({ ...context, status: outcome.status }, 'webhooks: delivered');
      }
      return;
    }
    if (outcome.kind === 'answered' && outcome.status === 410) {
      const reason = 'The endpoint answered 410 Gone';
      if (await settle(delivery, { status: 'failed', response_status: 410, last_error: reason, finished_at: at.toISOString() }, 'gone')) {
        await setEndpointEnabled(db, endpoint.id, false, reason, at);
        options.onEndpointDisabled?.();
        log.warn(context, 'webhooks: the endpoint answered 410 Gone; it is disabled');
      }
      return;
    }
    const error = outcome.kind === 'answered' ? `HTTP ${outcome.status}` : outcome.error;
    const responseStatus = outcome.kind === 'answered' ? outcome.status : null;
    const asked = outcome.kind === 'answered' ? retryAfterMs(outcome.retryAfter, at.getTime()) : null;
    const retryAt = at.getTime() + (asked ?? backoffMs(delivery.attempts));
    if (retryAt > Date.parse(delivery.createdAt) + retryWindowMs) {
      const gaveUp = `Gave up after ${delivery.attempts} attempts: ${error}`;
      if (await settle(delivery, { status: 'failed', response_status: responseStatus, last_error: gaveUp, finished_at: at.toISOString() }, 'failed')) {
        log.warn({ ...context, error }, 'webhooks: failed, not retrying (the retry window is over)');
      }
      return;
    }
    const next = new Date(retryAt).toISOString();
    if (await settle(delivery, { status: 'queued', response_status: responseStatus, last_error: error, next_attempt_at: next }, 'retry')) {
      log.info({ ...context, error, retryAt: next }, 'webhooks: attempt failed, will retry');
    }
  }

  async function pass(): Promise<number> {
    if (runner.stopping()) return 0;
    await failAbandonedDeliveries(db, now(), retryWindowMs);
    const claimed = await claimDueDeliveries(db, { now: now(), leaseMs, limit: batchSize });
    if (runner.stopping()) {
      await releaseDeliveries(db, claimed);
      return claimed.length;
    }
    await Promise.all(
      claimed.map((delivery) =>
        deliver(delivery).catch((err: unknown) => log.error({ err, id: delivery.id }, 'webhooks: recording a delivery failed (its lease will expire and it goes again)')),
      ),
    );
    return claimed.length;
  }

  const runner = createPassRunner({ pass, batchSize, pollIntervalMs, log, failure: 'webhooks: delivery pass failed' });
  return { start: () => void runner.start(), runOnce: runner.runOnce, wake: runner.wake, stop: runner.stop };
}
