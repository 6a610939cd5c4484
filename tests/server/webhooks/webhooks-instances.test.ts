import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { webhookEvents } from '../../../src/server/webhooks/index.js';
import { enqueueEvents, purgeExpiredDeliveries, settleDelivery } from '../../../src/server/webhooks/queue.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { cleanupsAfterEach } from '../../support/admin-app.js';
import { createTestApp } from '../../support/test-app.js';
import { verifiedPayload } from '../../support/webhook-receiver.js';
import { addEndpoint, deliveriesOf, setUpWebhooks, signUp } from './support.js';

/** Several instances on one database, a sender that died mid-attempt, the retention. */
const cleanups = cleanupsAfterEach();

describe.each(TEST_DIALECTS)('webhooks across instances (%s)', (dialect: TestDialect) => {
  it('two instances sending at once deliver every event exactly once', async () => {
    const ctx = await setUpWebhooks(cleanups, dialect, { batchSize: 3 });
    const { secret } = await addEndpoint(ctx);
    const other = await createTestApp(
      { DATABASE_URL: ctx.t.databaseUrl, AUTH_SECRET_KEY_FILE: path.join(ctx.t.dataDir, 'auth-secret.key'), WEBHOOK_ALLOW_PRIVATE: '1' },
      { webhookWorker: { pollIntervalMs: 3_600_000, batchSize: 3 } },
    );
    cleanups.push(() => other.close());
    // Queued with the SQL alone (no wake-up of either sender), so both start from the same 12 rows.
    const ids = Array.from({ length: 12 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    await ctx.t.app.database.db.transaction().execute((trx) => enqueueEvents(trx, ids.map((id) => webhookEvents.signupErased(id, new Date().toISOString(), 'admin')), new Date(ctx.clock.now)));
    const workers = [ctx.t.app.webhooks.worker, other.app.webhooks.worker];
    if (dialect === 'postgres') {
      const drain = async (worker: (typeof workers)[number]) => {
        for (let i = 0; i < 50; i++) if ((await worker.runOnce()) === 0) return;
      };
      await Promise.all([drain(workers[0]!), drain(workers[1]!)]);
    } else {
      // Two SQLite connections in one process cannot wait for each other's lock (better-sqlite3
      // blocks the event loop the other would commit on): here the instances take turns.
      for (let i = 0; i < 50; i++) if ((await workers[0]!.runOnce()) + (await workers[1]!.runOnce()) === 0) break;
    }
    const received = ctx.receiver.requests.map((r) => verifiedPayload(secret, r).data.id as string).sort();
    expect(received).toEqual(ids);
    expect(new Set(ctx.receiver.requests.map((r) => r.headers['webhook-id'])).size).toBe(12);
    const rows = await ctx.t.app.database.db.selectFrom('webhook_deliveries').select(['status', 'attempts']).execute();
    expect(rows.every((r) => r.status === 'delivered' && Number(r.attempts) === 1)).toBe(true);
  });

  it('a delivery whose sender died is sent again once its lease expires; the dead claim can record nothing', async () => {
    const ctx = await setUpWebhooks(cleanups, dialect);
    const { endpoint, secret } = await addEndpoint(ctx);
    await signUp(ctx, 'orphan@example.com');
    const { db } = ctx.t.app.database;
    const [row] = await db.selectFrom('webhook_deliveries').select('id').execute();
    const past = new Date(ctx.clock.now - 1000).toISOString();
    await db.updateTable('webhook_deliveries').set({ status: 'sending', attempts: 1, lease_until: past, lease_token: 'dead-claim' }).execute();
    await ctx.drain();
    const [delivery] = await deliveriesOf(ctx, endpoint.id);
    expect(delivery).toMatchObject({ id: row!.id, status: 'delivered', attempts: 2 });
    expect(verifiedPayload(secret, ctx.receiver.requests[0]!).type).toBe('signup.created');
    expect(await settleDelivery(db, { id: row!.id, leaseToken: 'dead-claim' }, { status: 'failed' })).toBe(false);
    expect((await deliveriesOf(ctx, endpoint.id))[0]!.status).toBe('delivered');
  });

  it('retention deletes finished deliveries and their events; waiting ones stay', async () => {
    const ctx = await setUpWebhooks(cleanups, dialect, { answer: (i) => ({ status: i === 0 ? 200 : 500 }) });
    await addEndpoint(ctx);
    await signUp(ctx, 'old@example.com');
    await ctx.drain();
    await signUp(ctx, 'waiting@example.com');
    await ctx.drain();
    const { db } = ctx.t.app.database;
    expect(await purgeExpiredDeliveries(db, 30, new Date(ctx.clock.now + 31 * 86_400_000))).toBe(1);
    const left = await db.selectFrom('webhook_deliveries as d').innerJoin('webhook_events as e', 'e.id', 'd.event_id').select(['d.status', 'e.payload']).execute();
    expect(left).toHaveLength(1);
    expect(left[0]!.status).toBe('queued');
    expect(left[0]!.payload).toContain('waiting@example.com');
    expect(await db.selectFrom('webhook_events').select('id').execute()).toHaveLength(1);
  });
});
