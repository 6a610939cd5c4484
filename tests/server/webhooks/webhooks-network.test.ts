import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/server/config.js';
import { addressResolver } from '../../../src/server/webhooks/safe-http.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { cleanupsAfterEach } from '../../support/admin-app.js';
import { startDnsServer } from '../../support/dns.js';
import { startWebhookReceiver, verifiedPayload } from '../../support/webhook-receiver.js';
import { addEndpoint, deliveriesOf, setUpWebhooks, signUp } from './support.js';

/**
 * Where a delivery may go, and for how long it is tried (docs/webhooks.md, decision 058): a redirect
 * is a failed attempt and is never followed; a name is resolved (by DNS_SERVERS here: a real DNS
 * server the test runs) when the delivery connects, so a name that came to resolve to a private
 * address after its endpoint was added (DNS rebinding) is refused then, unless WEBHOOK_ALLOW_PRIVATE=1.
 */
const cleanups = cleanupsAfterEach();
/** A public address (the name's answer when the endpoint is added; never connected to). */
const PUBLIC_ADDRESS = '93.184.215.14';
const NAME = 'hooks.rebinding.test';

describe('webhook defaults', () => {
  it('retries a delivery for 72 hours after it was queued and gives each attempt 15 s; private addresses off; the system resolver', () => {
    const { webhooks } = loadConfig({});
    expect(webhooks.retryWindowMs).toBe(72 * 3_600_000);
    expect(webhooks.timeoutMs).toBe(15_000);
    expect(webhooks.allowPrivate).toBe(false);
    expect(webhooks.dnsServers).toBeNull();
    const set = loadConfig({ WEBHOOK_RETRY_HOURS: '24', WEBHOOK_TIMEOUT_MS: '5000', DNS_SERVERS: '127.0.0.1:5353' }).webhooks;
    expect(set).toMatchObject({ retryWindowMs: 24 * 3_600_000, timeoutMs: 5_000, dnsServers: ['127.0.0.1:5353'] });
  });
});

describe.each(TEST_DIALECTS)('webhook deliveries and the network (%s)', (dialect: TestDialect) => {
  it('a 3xx answer is a failed attempt: the redirect is never followed, not even to an address allowed here', async () => {
    const target = await startWebhookReceiver();
    cleanups.push(() => target.close());
    const redirects = [301, 302, 303, 307, 308];
    // WEBHOOK_ALLOW_PRIVATE=1 (the suite's set-up): the target on 127.0.0.1 would be reachable if followed.
    const ctx = await setUpWebhooks(cleanups, dialect, { answer: (i) => ({ status: redirects[i] ?? 204, headers: { location: target.url } }) });
    const { endpoint } = await addEndpoint(ctx);
    await signUp(ctx, 'redirected@example.com');
    for (const [n, status] of redirects.entries()) {
      await ctx.drain();
      const [delivery] = await deliveriesOf(ctx, endpoint.id);
      expect(delivery, `attempt ${n + 1}`).toMatchObject({ status: 'queued', attempts: n + 1, responseStatus: status, lastError: `HTTP ${status}` });
      ctx.clock.now = Date.parse(delivery!.nextAttemptAt);
    }
    expect(ctx.receiver.requests).toHaveLength(redirects.length);
    expect(target.requests).toHaveLength(0);
  });

  it('refuses, when connecting, a name that has come to resolve to a private address (DNS rebinding): nothing reaches it', async () => {
    const dns = await startDnsServer({ [NAME]: { kind: 'a-only', address: PUBLIC_ADDRESS } });
    cleanups.push(() => dns.close());
    const ctx = await setUpWebhooks(cleanups, dialect, { env: { WEBHOOK_ALLOW_PRIVATE: '0', DNS_SERVERS: dns.address } });
    // Added while the name resolves to a public address (a name is accepted; only a private literal address is refused when added).
    expect(await addressResolver([dns.address])(NAME, {})).toEqual([{ address: PUBLIC_ADDRESS, family: 4 }]);
    const { endpoint } = await addEndpoint(ctx, { url: `http://${NAME}:${ctx.receiver.port}/hook` });

    // Then the name answers this machine's loopback address, where the receiver listens.
    dns.zones.set(NAME, { kind: 'a-only', address: '127.0.0.1' });
    await signUp(ctx, 'rebound@example.com');
    await ctx.drain();
    const [delivery] = await deliveriesOf(ctx, endpoint.id);
    expect(delivery).toMatchObject({ status: 'queued', attempts: 1, responseStatus: null });
    expect(delivery!.lastError).toContain(`${NAME} resolves to a non-public address (127.0.0.1)`);
    expect(ctx.receiver.requests).toHaveLength(0);

    // Still refused on the next attempt.
    ctx.clock.now = Date.parse(delivery!.nextAttemptAt);
    await ctx.drain();
    expect((await deliveriesOf(ctx, endpoint.id))[0]).toMatchObject({ status: 'queued', attempts: 2, responseStatus: null });
    expect(ctx.receiver.requests).toHaveLength(0);
  });

  it('with WEBHOOK_ALLOW_PRIVATE=1 the same name, resolved by DNS_SERVERS, is delivered to', async () => {
    const dns = await startDnsServer({ [NAME]: { kind: 'a-only', address: '127.0.0.1' } });
    cleanups.push(() => dns.close());
    const ctx = await setUpWebhooks(cleanups, dialect, { env: { WEBHOOK_ALLOW_PRIVATE: '1', DNS_SERVERS: dns.address } });
    const { secret, endpoint } = await addEndpoint(ctx, { url: `http://${NAME}:${ctx.receiver.port}/hook` });
    const id = await signUp(ctx, 'allowed@example.com');
    await ctx.drain();
    expect((await deliveriesOf(ctx, endpoint.id))[0]).toMatchObject({ status: 'delivered', attempts: 1, responseStatus: 204 });
    expect(ctx.receiver.requests.map((r) => verifiedPayload(secret, r))).toMatchObject([{ type: 'signup.created', data: { id } }]);
    expect(ctx.receiver.requests[0]!.headers.host).toBe(`${NAME}:${ctx.receiver.port}`);
  });
});
