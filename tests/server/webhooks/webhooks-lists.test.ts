import { describe, expect, it, vi } from 'vitest';
import { createApiKey } from '../../../src/server/api/keys.js';
import { createList, updateList, type ListActor } from '../../../src/server/lists/manage.js';
import { SIGNUP_PATH } from '../../../src/shared/waitlist/signup-contract.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { cleanupsAfterEach } from '../../support/admin-app.js';
import { verifiedPayload } from '../../support/webhook-receiver.js';
import { addEndpoint, setUpWebhooks, signUp, type WebhookCtx } from './support.js';

/**
 * `signup.created` for an offering list's signups (issue 31's lists, issue 32's webhooks): raised in
 * the signup's own transaction, as the portal's is, with the list's slug in its payload.
 */
const cleanups = cleanupsAfterEach();
const ACTOR: ListActor = { email: null, id: null, ip: null, by: 'cli' };
const SLUG = 'acme-robotics';

async function openList(ctx: WebhookCtx) {
  const { db } = ctx.t.app.database;
  await createList(db, ACTOR, { slug: SLUG, name: 'Acme Robotics, Inc.', kind: 'testing-the-waters', bands: [1000, 5000] });
  return updateList(db, ACTOR, SLUG, { state: 'open' });
}

const offeringSignUp = (ctx: WebhookCtx, email: string) =>
  ctx.t.app.inject({ method: 'POST', url: SIGNUP_PATH, headers: { 'content-type': 'application/json' }, payload: { email, list: SLUG, intended_amount: '1000-5000' } });

async function entryId(ctx: WebhookCtx, email: string, listId: number): Promise<string | undefined> {
  const row = await ctx.t.app.database.db.selectFrom('waitlist').select('id').where('email', '=', email).where('list_id', '=', listId).executeTakeFirst();
  return row?.id;
}

describe.each(TEST_DIALECTS)('webhooks for offering lists (%s)', (dialect: TestDialect) => {
  it('an offering list signup (its page, the API) delivers a verified signup.created naming the list; the portal\'s names the portal', async () => {
    const ctx = await setUpWebhooks(cleanups, dialect);
    const { secret } = await addEndpoint(ctx);
    const acme = await openList(ctx);

    const res = await offeringSignUp(ctx, 'ivy@example.com');
    expect(res.statusCode, res.body).toBe(201);
    const { token } = await createApiKey(ctx.t.app.database.db, { name: 'CRM', scopes: ['signups:write'], rateLimit: 600 }, { userId: null, email: null, ip: null });
    const viaApi = await ctx.t.app.inject({ method: 'POST', url: '/api/v1/signups', headers: { authorization: `Bearer ${token}` }, payload: { email: 'jay@example.com', list: SLUG } });
    expect(viaApi.statusCode, viaApi.body).toBe(201);
    const portalId = await signUp(ctx, 'kim@example.com');
    await ctx.drain();

    const payloads = ctx.receiver.requests.map((r) => verifiedPayload(secret, r)).sort((a, b) => String(a.data.email).localeCompare(String(b.data.email)));
    expect(payloads).toMatchObject([
      { type: 'signup.created', data: { id: await entryId(ctx, 'ivy@example.com', acme.id), email: 'ivy@example.com', status: 'joined', list: SLUG } },
      { type: 'signup.created', data: { id: viaApi.json<{ id: string }>().id, email: 'jay@example.com', status: 'joined', list: SLUG } },
      { type: 'signup.created', data: { id: portalId, email: 'kim@example.com', status: 'joined', list: 'portal' } },
    ]);
    // The same fields as the portal's event: never the client's addresses nor the consent internals.
    for (const { data } of payloads) {
      for (const field of ['ip_address', 'confirmed_ip', 'consent_version', 'consent_record', 'confirmation_sent_at', 'held_reason']) expect(data).not.toHaveProperty(field);
    }
    expect(Object.keys(payloads[0]!.data).sort()).toEqual(Object.keys(payloads[2]!.data).sort());

    // Signing up again on the list raises nothing more (as on the portal's).
    expect((await offeringSignUp(ctx, 'ivy@example.com')).statusCode).toBe(409);
    await ctx.drain();
    expect(ctx.receiver.requests).toHaveLength(3);
  });

  it('is written in the signup\'s transaction: when the event cannot be queued, the signup is not stored either', async () => {
    const ctx = await setUpWebhooks(cleanups, dialect);
    const { secret } = await addEndpoint(ctx);
    const acme = await openList(ctx);
    const enqueue = vi.spyOn(ctx.t.app.webhooks, 'enqueue').mockRejectedValueOnce(new Error('the event could not be written'));
    try {
      const failed = await offeringSignUp(ctx, 'lee@example.com');
      expect(failed.statusCode).toBe(500);
      expect(enqueue).toHaveBeenCalledTimes(1);
      expect(await entryId(ctx, 'lee@example.com', acme.id)).toBeUndefined();
    } finally {
      enqueue.mockRestore();
    }
    const stored = await offeringSignUp(ctx, 'lee@example.com');
    expect(stored.statusCode, stored.body).toBe(201);
    await ctx.drain();
    expect(ctx.receiver.requests.map((r) => verifiedPayload(secret, r))).toMatchObject([
      { type: 'signup.created', data: { id: await entryId(ctx, 'lee@example.com', acme.id), list: SLUG } },
    ]);
  });
});
