import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { confirmEntry, eraseEntry, unsubscribeEntry, type ConsentDeps } from '../../../src/server/consent/service.js';
import { webhookEvents } from '../../../src/server/webhooks/index.js';
import { webhookBackoffMs, retryAfterMs } from '../../../src/server/webhooks/worker.js';
import { adminReplayPath, adminWebhookPath, type WebhookDeliveryView } from '../../../src/shared/admin/webhooks-api.js';
import { ADMIN_HELD_APPROVE_PATH } from '../../../src/shared/admin/held-api.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { cleanupsAfterEach } from '../../support/admin-app.js';
import { verifiedPayload } from '../../support/webhook-receiver.js';
import { addEndpoint, deliveriesOf, setUpWebhooks, signUp, type WebhookCtx } from './support.js';

/** Webhooks end to end: real signups and consent changes, a real receiver verifying every delivery with `standardwebhooks`. */
const cleanups = cleanupsAfterEach();

const consentDeps = (ctx: WebhookCtx): ConsentDeps => ({
  db: ctx.t.app.database.db,
  box: ctx.t.app.secretBox,
  mail: ctx.t.app.mail,
  webhooks: ctx.t.app.webhooks,
  welcome: false,
  now: () => new Date(ctx.clock.now),
});

async function rowCounts(ctx: WebhookCtx) {
  const { db } = ctx.t.app.database;
  const events = await db.selectFrom('webhook_events').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
  const deliveries = await db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
  return { events: Number(events.n), deliveries: Number(deliveries.n) };
}

describe('webhook backoff and Retry-After', () => {
  it('doubles from 30 s up to 12 h, jittered between half and all of it', () => {
    expect(webhookBackoffMs(1, () => 0)).toBe(15_000);
    expect(webhookBackoffMs(1, () => 1)).toBe(30_000);
    expect(webhookBackoffMs(4, () => 1)).toBe(240_000);
    expect(webhookBackoffMs(30, () => 1)).toBe(12 * 3_600_000);
    expect(webhookBackoffMs(30, () => 0)).toBe(6 * 3_600_000);
  });
  it('reads seconds and HTTP dates', () => {
    const now = Date.parse('2026-12-01T10:00:00Z');
    expect(retryAfterMs('120', now)).toBe(120_000);
    expect(retryAfterMs('Tue, 01 Dec 2026 10:05:00 GMT', now)).toBe(300_000);
    expect(retryAfterMs('soon', now)).toBeNull();
    expect(retryAfterMs(null, now)).toBeNull();
  });
});

describe.each(TEST_DIALECTS)('webhooks (%s)', (dialect: TestDialect) => {
  it('every event of an entry is delivered, signed, and verifies with standardwebhooks; erasure leaves only the id', async () => {
    const ctx = await setUpWebhooks(cleanups, dialect);
    const { secret, endpoint } = await addEndpoint(ctx);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(endpoint.events).toEqual([]);

    const id = await signUp(ctx, 'ada@example.com');
    await ctx.drain();
    await confirmEntry(consentDeps(ctx), id, '203.0.113.9');
    await unsubscribeEntry(consentDeps(ctx), id);
    await ctx.drain();
    await eraseEntry(consentDeps(ctx), id);
    await ctx.drain();

    // Each drain's deliveries are sent side by side: the confirmation and the unsubscribe, due
    // together, may arrive in either order (docs/webhooks.md). Put in the order of the changes.
    const order = ['signup.created', 'signup.confirmed', 'signup.unsubscribed', 'signup.erased'];
    const received = ctx.receiver.requests
      .map((request) => ({ request, payload: verifiedPayload(secret, request) }))
      .sort((a, b) => order.indexOf(a.payload.type) - order.indexOf(b.payload.type))
      .map(({ request }) => request);
    expect(received.map((r) => r.method)).toEqual(['POST', 'POST', 'POST', 'POST']);
    const payloads = received.map((r) => verifiedPayload(secret, r));
    expect(payloads.map((p) => p.type)).toEqual(['signup.created', 'signup.confirmed', 'signup.unsubscribed', 'signup.erased']);
    expect(payloads[0]!.data).toMatchObject({ id, email: 'ada@example.com', status: 'joined' });
    expect(payloads[1]!.data).toMatchObject({ id, email: 'ada@example.com', status: 'confirmed' });
    expect(payloads[2]!.data).toMatchObject({ id, email: 'ada@example.com', status: 'unsubscribed' });
    // No address in the erasure event, nor anywhere in what is stored about the entry afterwards.
    expect(payloads[3]!.data).toEqual({ id, erased_at: new Date(ctx.clock.now).toISOString(), by: 'subject' });
    expect(received[3]!.body).not.toContain('ada@');
    const stored = await ctx.t.app.database.db.selectFrom('webhook_events').select('payload').execute();
    expect(stored).toHaveLength(1);
    expect(stored[0]!.payload).not.toContain('ada@');

    for (const r of received) {
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['webhook-id']).toMatch(/^msg_[A-Za-z0-9_-]{24}$/);
      expect(r.headers['webhook-timestamp']).toMatch(/^\d{10}$/);
      expect(r.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    }
    // A wrong secret, or an altered body, does not verify.
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(received[0]!.body, received[0]!.headers)).toThrow();
    expect(() => new Webhook(secret).verify(received[0]!.body.replace('ada', 'eve'), received[0]!.headers)).toThrow();

    const deliveries = await deliveriesOf(ctx, endpoint.id);
    // The erased entry's earlier deliveries went with their events.
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({ eventType: 'signup.erased', status: 'delivered', attempts: 1, responseStatus: 204, lastError: null });
  });

  it('an endpoint gets only the events it subscribed to; a disabled one gets nothing', async () => {
    const ctx = await setUpWebhooks(cleanups, dialect);
    const confirmedOnly = await addEndpoint(ctx, { events: ['signup.confirmed'] });
    const everything = await addEndpoint(ctx, { url: `${ctx.receiver.url}?all=1` });
    const id = await signUp(ctx, 'bo@example.com');
    await confirmEntry(consentDeps(ctx), id, undefined);
    await ctx.drain();
    expect((await deliveriesOf(ctx, confirmedOnly.endpoint.id)).map((d) => d.eventType)).toEqual(['signup.confirmed']);
    expect((await deliveriesOf(ctx, everything.endpoint.id)).map((d) => d.eventType).sort()).toEqual(['signup.confirmed', 'signup.created']);

    expect((await ctx.call('POST', adminWebhookPath(everything.endpoint.id, 'disable'), {})).statusCode).toBe(200);
    expect((await ctx.call('POST', adminWebhookPath(confirmedOnly.endpoint.id, 'disable'), {})).statusCode).toBe(200);
    const before = await rowCounts(ctx);
    await signUp(ctx, 'cy@example.com');
    expect(await rowCounts(ctx)).toEqual(before);
  });

  it('a held signup (no proof of work) raises no signup.created; approving it does', async () => {
    const ctx = await setUpWebhooks(cleanups, dialect, { env: { SIGNUP_CHALLENGE: 'proof-of-work', SIGNUP_CHALLENGE_MAX_NUMBER: '1000' } });
    const { secret } = await addEndpoint(ctx);
    const id = await signUp(ctx, 'script@example.com');
    const held = await ctx.t.app.database.db.selectFrom('waitlist').select('status').where('id', '=', id).executeTakeFirstOrThrow();
    expect(held.status).toBe('held');
    await ctx.drain();
    expect(ctx.receiver.requests).toHaveLength(0);

    expect((await ctx.call('POST', ADMIN_HELD_APPROVE_PATH, { ids: [id] })).json()).toEqual({ count: 1 });
    await ctx.drain();
    expect(ctx.receiver.requests.map((r) => verifiedPayload(secret, r))).toMatchObject([{ type: 'signup.created', data: { id } }]);
  });

  it('a failed transaction enqueues nothing; a committed one enqueues with its change', async () => {
    const ctx = await setUpWebhooks(cleanups, dialect);
    await addEndpoint(ctx);
    const { db } = ctx.t.app.database;
    const event = webhookEvents.signupErased('00000000-0000-4000-8000-000000000001', new Date().toISOString(), 'admin');
    await expect(
      db.transaction().execute(async (trx) => {
        expect(await ctx.t.app.webhooks.enqueue(trx, [event])).toBe(1);
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    expect(await rowCounts(ctx)).toEqual({ events: 0, deliveries: 0 });

    // A real feature path: an unsubscribe whose entry is gone fails as a whole, writing no event.
    await expect(unsubscribeEntry(consentDeps(ctx), '00000000-0000-4000-8000-000000000002')).rejects.toMatchObject({ code: 'entry_gone' });
    expect(await rowCounts(ctx)).toEqual({ events: 0, deliveries: 0 });

    await db.transaction().execute((trx) => ctx.t.app.webhooks.enqueue(trx, [event]));
    expect(await rowCounts(ctx)).toEqual({ events: 1, deliveries: 1 });
  });

  it('retries with exponential backoff until the receiver takes it; every attempt has the same id and verifies', async () => {
    const ctx = await setUpWebhooks(cleanups, dialect, { answer: (i) => ({ status: i < 2 ? 500 : 200 }) });
    const { secret, endpoint } = await addEndpoint(ctx);
    await signUp(ctx, 'retry@example.com');
    await ctx.drain();
    let [delivery] = await deliveriesOf(ctx, endpoint.id);
    expect(delivery).toMatchObject({ status: 'queued', attempts: 1, responseStatus: 500, lastError: 'HTTP 500' });
    const firstWait = Date.parse(delivery!.nextAttemptAt) - ctx.clock.now;
    expect(firstWait).toBeGreaterThanOrEqual(15_000);
    expect(firstWait).toBeLessThanOrEqual(30_000);

    // Not due yet: nothing is sent.
    await ctx.drain();
    expect(ctx.receiver.requests).toHaveLength(1);

    ctx.clock.now = Date.parse(delivery!.nextAttemptAt);
    await ctx.drain();
    [delivery] = await deliveriesOf(ctx, endpoint.id);
    expect(delivery).toMatchObject({ status: 'queued', attempts: 2, responseStatus: 500 });
    const secondWait = Date.parse(delivery!.nextAttemptAt) - ctx.clock.now;
    expect(secondWait).toBeGreaterThanOrEqual(30_000);
    expect(secondWait).toBeLessThanOrEqual(60_000);

    ctx.clock.now = Date.parse(delivery!.nextAttemptAt);
    await ctx.drain();
    [delivery] = await deliveriesOf(ctx, endpoint.id);
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 3, responseStatus: 200, lastError: null });
    expect(ctx.receiver.requests).toHaveLength(3);
    expect(new Set(ctx.receiver.requests.map((r) => r.headers['webhook-id'])).size).toBe(1);
    for (const r of ctx.receiver.requests) expect(verifiedPayload(secret, r).type).toBe('signup.created');
  });

  it('honours Retry-After, and gives up once the retry window is over', async () => {
    const ctx = await setUpWebhooks(cleanups, dialect, { env: { WEBHOOK_RETRY_HOURS: '1' }, answer: () => ({ status: 503, headers: { 'retry-after': '120' } }) });
    const { endpoint } = await addEndpoint(ctx);
    await signUp(ctx, 'later@example.com');
    await ctx.drain();
    let [delivery] = await deliveriesOf(ctx, endpoint.id);
    expect(delivery).toMatchObject({ status: 'queued', attempts: 1, responseStatus: 503 });
    expect(Date.parse(delivery!.nextAttemptAt) - ctx.clock.now).toBe(120_000);

    ctx.receiver.answerWith(() => ({ status: 429, headers: { 'retry-after': '7200' } }));
    ctx.clock.now += 120_000;
    await ctx.drain();
    [delivery] = await deliveriesOf(ctx, endpoint.id);
    // Two hours later would be past the one-hour window: failed now, not retried.
    expect(delivery).toMatchObject({ status: 'failed', attempts: 2, responseStatus: 429, lastError: 'Gave up after 2 attempts: HTTP 429' });
    expect(ctx.receiver.requests).toHaveLength(2);
  });

  it('410 Gone disables the endpoint and ends its waiting deliveries', async () => {
    const ctx = await setUpWebhooks(cleanups, dialect, { answer: () => ({ status: 410 }) });
    const { endpoint } = await addEndpoint(ctx);
    await signUp(ctx, 'gone1@example.com');
    await ctx.drain();
    const list = await ctx.call('GET', '/api/admin/webhooks');
    expect(list.json().endpoints[0]).toMatchObject({ id: endpoint.id, enabled: false, disabledReason: 'The endpoint answered 410 Gone' });
    expect((await deliveriesOf(ctx, endpoint.id))[0]).toMatchObject({ status: 'failed', responseStatus: 410, attempts: 1 });
    // Nothing more is queued for it.
    const before = await rowCounts(ctx);
    await signUp(ctx, 'gone2@example.com');
    expect(await rowCounts(ctx)).toEqual(before);
    expect(ctx.receiver.requests).toHaveLength(1);
  });

  it('a receiver that never answers times out (WEBHOOK_TIMEOUT_MS) and the delivery is retried', async () => {
    const ctx = await setUpWebhooks(cleanups, dialect, { env: { WEBHOOK_TIMEOUT_MS: '300' }, answer: (i) => (i === 0 ? 'hang' : { status: 200 }) });
    const { secret, endpoint } = await addEndpoint(ctx);
    await signUp(ctx, 'slow@example.com');
    await ctx.drain();
    let [delivery] = await deliveriesOf(ctx, endpoint.id);
    expect(delivery).toMatchObject({ status: 'queued', attempts: 1, responseStatus: null });
    expect(delivery!.lastError).toContain('no answer within 300 ms');
    ctx.clock.now = Date.parse(delivery!.nextAttemptAt);
    await ctx.drain();
    [delivery] = await deliveriesOf(ctx, endpoint.id);
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 2, responseStatus: 200 });
    expect(verifiedPayload(secret, ctx.receiver.requests[1]!).type).toBe('signup.created');
  });

  it('replays a delivery: the same event (same webhook-id) again, as a new delivery', async () => {
    const ctx = await setUpWebhooks(cleanups, dialect);
    const { secret, endpoint } = await addEndpoint(ctx);
    await signUp(ctx, 'again@example.com');
    await ctx.drain();
    const [first] = await deliveriesOf(ctx, endpoint.id);
    const res = await ctx.call('POST', adminReplayPath(first!.id), {});
    expect(res.statusCode, res.body).toBe(200);
    const replay = res.json<WebhookDeliveryView>();
    expect(replay).toMatchObject({ eventId: first!.eventId, status: 'queued', attempts: 0 });
    expect(replay.id).not.toBe(first!.id);
    await ctx.drain();
    expect(ctx.receiver.requests).toHaveLength(2);
    expect(ctx.receiver.requests[1]!.headers['webhook-id']).toBe(ctx.receiver.requests[0]!.headers['webhook-id']);
    expect(verifiedPayload(secret, ctx.receiver.requests[1]!)).toEqual(verifiedPayload(secret, ctx.receiver.requests[0]!));
    const deliveries = await deliveriesOf(ctx, endpoint.id);
    expect(deliveries.map((d) => d.status)).toEqual(['delivered', 'delivered']);
    expect((await ctx.call('POST', adminReplayPath('00000000-0000-4000-8000-000000000009'), {})).statusCode).toBe(404);
  });

  it('rotation: both secrets sign during the overlap, then only the new one', async () => {
    const ctx = await setUpWebhooks(cleanups, dialect);
    const { secret: oldSecret, endpoint } = await addEndpoint(ctx);
    const res = await ctx.call('POST', adminWebhookPath(endpoint.id, 'rotate'), {});
    expect(res.statusCode, res.body).toBe(200);
    const { secret: newSecret, endpoint: rotated } = res.json<{ secret: string; endpoint: { previousSecretUntil: string | null } }>();
    expect(newSecret).not.toBe(oldSecret);
    expect(Date.parse(rotated.previousSecretUntil!)).toBeGreaterThan(Date.now() + 23 * 3_600_000);

    await signUp(ctx, 'rot@example.com');
    await ctx.drain();
    const during = ctx.receiver.requests[0]!;
    expect(during.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(verifiedPayload(oldSecret, during).type).toBe('signup.created');
    expect(verifiedPayload(newSecret, during).type).toBe('signup.created');

    // The overlap over: the previous secret no longer signs.
    await ctx.t.app.database.db.updateTable('webhook_endpoints').set({ previous_secret_until: new Date(Date.now() - 1000).toISOString() }).execute();
    await signUp(ctx, 'rot2@example.com');
    await ctx.drain();
    const after = ctx.receiver.requests[1]!;
    expect(after.headers['webhook-signature']!.split(' ')).toHaveLength(1);
    expect(verifiedPayload(newSecret, after).type).toBe('signup.created');
    expect(() => verifiedPayload(oldSecret, after)).toThrow();
  });
});
