import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { SIGNUP_PATH } from '../../../src/shared/waitlist/signup-contract.js';
import { ADMIN_WEBHOOKS_PATH, type CreatedWebhook, type WebhookDeliveryView } from '../../../src/shared/admin/webhooks-api.js';
import { adminWebhookPath } from '../../../src/shared/admin/webhooks-api.js';
import type { TestDialect } from '../../support/databases.js';
import { createAdminTestApp } from '../../support/admin-app.js';
import type { TestApp } from '../../support/test-app.js';
import { startWebhookReceiver, type ReceiverAnswer, type ReceivedRequest, type WebhookReceiver } from '../../support/webhook-receiver.js';

/** The webhook suites' set-up: an app with an admin signed in, a clock the test moves, a real receiver. */
export interface WebhookCtx {
  t: TestApp;
  token: string;
  receiver: WebhookReceiver;
  clock: { now: number };
  call(method: 'GET' | 'POST', url: string, body?: unknown, auth?: string | null): Promise<LightMyRequestResponse>;
  /** Worker passes until one claims nothing. */
  drain(): Promise<void>;
}

export async function setUpWebhooks(
  cleanups: Array<() => Promise<void>>,
  dialect: TestDialect,
  options: { env?: Record<string, string>; answer?: (index: number, request: ReceivedRequest) => ReceiverAnswer; backoffMs?: (attempts: number) => number; batchSize?: number } = {},
): Promise<WebhookCtx> {
  const receiver = await startWebhookReceiver(options.answer);
  cleanups.push(() => receiver.close());
  const clock = { now: Date.parse('2026-12-01T10:00:00.000Z') };
  const { t, token } = await createAdminTestApp(
    { WEBHOOK_ALLOW_PRIVATE: '1', ...options.env },
    { dialect, webhookWorker: { pollIntervalMs: 3_600_000, now: () => new Date(clock.now), ...(options.backoffMs ? { backoffMs: options.backoffMs } : {}), ...(options.batchSize ? { batchSize: options.batchSize } : {}) } },
  );
  cleanups.push(() => t.close());
  const call: WebhookCtx['call'] = (method, url, body, auth = `Bearer ${token}`) =>
    t.app.inject({
      method,
      url,
      headers: { ...(auth === null ? {} : { authorization: auth }), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
  const drain = async () => {
    for (let i = 0; i < 50; i++) if ((await t.app.webhooks.worker.runOnce()) === 0) return;
    throw new Error('the deliveries did not drain');
  };
  return { t, token, receiver, clock, call, drain };
}

export async function addEndpoint(ctx: WebhookCtx, body: { url?: string; events?: string[] } = {}): Promise<CreatedWebhook> {
  const res = await ctx.call('POST', ADMIN_WEBHOOKS_PATH, { url: ctx.receiver.url, ...body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<CreatedWebhook>();
}

export async function signUp(ctx: WebhookCtx, email: string): Promise<string> {
  const res = await ctx.t.app.inject({ method: 'POST', url: SIGNUP_PATH, payload: JSON.stringify({ email }), headers: { 'content-type': 'application/json' } });
  expect(res.statusCode, res.body).toBe(201);
  const row = await ctx.t.app.database.db.selectFrom('waitlist').select('id').where('email', '=', email).executeTakeFirstOrThrow();
  return row.id;
}

export async function deliveriesOf(ctx: WebhookCtx, endpointId: string): Promise<WebhookDeliveryView[]> {
  const res = await ctx.call('GET', adminWebhookPath(endpointId, 'deliveries'));
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ deliveries: WebhookDeliveryView[] }>().deliveries;
}
