import type { FastifyInstance } from 'fastify';
import type { WebhooksConfig } from '../config.js';
import type { WebhookEventType, WebhookQueue } from './index.js';
import { takesEvent } from './endpoints.js';
import { enqueueEvents, forgetEntries, purgeExpiredDeliveries } from './queue.js';
import { createWebhookWorker, type WebhookWorker, type WebhookWorkerOptions } from './worker.js';

/** What the server sees of webhooks: the queue features raise events through, and the sender. */
export interface WebhookService extends WebhookQueue {
  worker: WebhookWorker;
  /** Reads the enabled endpoints' subscriptions again (after a change in this process). */
  refresh(): Promise<void>;
}

/** Worker settings tests replace. */
export type WebhookWorkerOverrides = Partial<Pick<WebhookWorkerOptions, 'now' | 'backoffMs' | 'pollIntervalMs' | 'leaseMs' | 'batchSize'>>;

declare module 'fastify' {
  interface FastifyInstance {
    webhooks: WebhookService;
  }
}

/** How often each process reads the endpoints' subscriptions (an endpoint added elsewhere is seen within this). */
export const WEBHOOK_REFRESH_MS = 5_000;
const DAY_MS = 86_400_000;

/**
 * Decorates `app.webhooks` and starts the sender when the app is ready (stopped before the
 * database closes). Always on: with no endpoint, nothing is written and the sender finds nothing.
 */
export function registerWebhooks(app: FastifyInstance, config: WebhooksConfig, overrides: WebhookWorkerOverrides = {}): void {
  const db = () => app.database.db;
  /** The `events` column of every enabled endpoint; null until first read (then everything is "wanted"). */
  let subscriptions: string[] | null = null;
  const refresh = async () => {
    const rows = await db().selectFrom('webhook_endpoints').select('events').where('enabled', '=', 1).execute();
    subscriptions = rows.map((r) => r.events);
  };
  const wants = (type: WebhookEventType) => subscriptions === null || subscriptions.some((events) => takesEvent(events, type));
  const now = overrides.now ?? (() => new Date());

  const worker = createWebhookWorker({
    db: app.database.db,
    box: app.secretBox,
    log: app.log,
    timeoutMs: config.timeoutMs,
    allowPrivate: config.allowPrivate,
    dnsServers: config.dnsServers,
    retryWindowMs: config.retryWindowMs,
    onEndpointDisabled: () => void refresh().catch(() => undefined),
    ...overrides,
  });
  app.decorate('webhooks', {
    wants,
    async enqueue(trx, events) {
      const wanted = events.filter((e) => wants(e.type as WebhookEventType));
      const written = await enqueueEvents(trx, wanted, now());
      // Inside a transaction the rows are not visible yet; the worker then finds them on its next poll.
      if (written > 0) worker.wake();
      return written;
    },
    forgetEntries,
    worker,
    refresh,
  } satisfies WebhookService);

  let refreshTimer: NodeJS.Timeout | null = null;
  let retentionTimer: NodeJS.Timeout | null = null;
  const purge = async () => {
    try {
      const deleted = await purgeExpiredDeliveries(db(), config.retentionDays, now());
      if (deleted > 0) app.log.info({ deleted, retentionDays: config.retentionDays }, 'webhooks: expired deliveries deleted');
    } catch (err) {
      app.log.error({ err }, 'webhooks: could not delete expired deliveries');
    }
  };
  app.addHook('onReady', async () => {
    await refresh();
    refreshTimer = setInterval(() => void refresh().catch((err: unknown) => app.log.error({ err }, 'webhooks: could not read the endpoints')), WEBHOOK_REFRESH_MS);
    refreshTimer.unref();
    await purge();
    retentionTimer = setInterval(() => void purge(), DAY_MS);
    retentionTimer.unref();
    worker.start();
  });
  app.addHook('preClose', async () => {
    if (refreshTimer) clearInterval(refreshTimer);
    if (retentionTimer) clearInterval(retentionTimer);
    await worker.stop();
  });
}
