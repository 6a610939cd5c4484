import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { createSecretBox } from '../../../src/server/crypto/secret-box.js';
import { describe, expect, it } from 'vitest';
import { listAudit } from '../../../src/server/audit/audit-log.js';
import { run } from '../../../src/server/cli/admin.js';
import { ADMIN_DELETE_PATH, ADMIN_INVITE_PATH } from '../../../src/shared/admin/waitlist-api.js';
import { ADMIN_WEBHOOKS_PATH, adminReplayPath, adminWebhookPath, type WebhookList } from '../../../src/shared/admin/webhooks-api.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { cleanupsAfterEach, mailEnv, startTestSmtp } from '../../support/admin-app.js';
import { runCliInProcess } from '../../support/server-process.js';
import { verifiedPayload } from '../../support/webhook-receiver.js';
import { addEndpoint, deliveriesOf, setUpWebhooks, signUp } from './support.js';

/** The admin webhooks API, the private-address refusal, the audit, the CLI. */
const cleanups = cleanupsAfterEach();
const UNKNOWN = '00000000-0000-4000-8000-00000000000a';

describe.each(TEST_DIALECTS)('webhooks admin (%s)', (dialect: TestDialect) => {
  it('401 without an admin token on every route; nothing changed', async () => {
    const ctx = await setUpWebhooks(cleanups, dialect);
    const { endpoint } = await addEndpoint(ctx);
    const routes = [
      ['GET', ADMIN_WEBHOOKS_PATH, undefined],
      ['POST', ADMIN_WEBHOOKS_PATH, { url: ctx.receiver.url }],
      ['POST', adminWebhookPath(endpoint.id, 'disable'), {}],
      ['POST', adminWebhookPath(endpoint.id, 'enable'), {}],
      ['POST', adminWebhookPath(endpoint.id, 'rotate'), {}],
      ['POST', adminWebhookPath(endpoint.id, 'remove'), {}],
      ['GET', adminWebhookPath(endpoint.id, 'deliveries'), undefined],
      ['POST', adminReplayPath(UNKNOWN), {}],
    ] as const;
    for (const auth of [null, 'Bearer not-a-token']) {
      for (const [method, url, body] of routes) {
        const res = await ctx.call(method, url, body, auth);
        expect(res.statusCode, `${method} ${url}`).toBe(401);
      }
    }
    const list = (await ctx.call('GET', ADMIN_WEBHOOKS_PATH)).json<WebhookList>();
    expect(list.endpoints).toHaveLength(1);
    expect(list.endpoints[0]).toMatchObject({ enabled: true, previousSecretUntil: null });
  });

  it('bad input is a clear 4xx; the endpoint cap holds; 404 for unknown ids', async () => {
    const ctx = await setUpWebhooks(cleanups, dialect, { env: { WEBHOOK_MAX_ENDPOINTS: '2' } });
    for (const [body, code] of [
      [{ url: 'ftp://example.com/hook' }, 'invalid_url'],
      [{ url: 'not a url' }, 'invalid_url'],
      [{ url: 'https://user:pw@example.com/hook' }, 'invalid_url'],
      [{ url: 'https://example.com/hook', events: ['signup.nope'] }, 'bad_request'],
      [{ url: 'x'.repeat(3000) }, 'bad_request'],
    ] as const) {
      const res = await ctx.call('POST', ADMIN_WEBHOOKS_PATH, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().error.code).toBe(code);
    }
    await addEndpoint(ctx);
    await addEndpoint(ctx, { events: ['invite.sent'] });
    const third = await ctx.call('POST', ADMIN_WEBHOOKS_PATH, { url: ctx.receiver.url });
    expect(third.statusCode).toBe(409);
    expect(third.json().error.code).toBe('too_many_endpoints');
    for (const action of ['disable', 'enable', 'rotate', 'remove', 'deliveries'] as const) {
      const res = await ctx.call(action === 'deliveries' ? 'GET' : 'POST', adminWebhookPath(UNKNOWN, action), action === 'deliveries' ? undefined : {});
      expect(res.statusCode, action).toBe(404);
    }
    expect((await ctx.call('POST', adminWebhookPath('not-an-id', 'disable'), {})).statusCode).toBe(400);
  });

  it('every change is audited with the endpoint id and origin, never the secret or the path', async () => {
    const ctx = await setUpWebhooks(cleanups, dialect);
    const { endpoint, secret } = await addEndpoint(ctx, { url: `${ctx.receiver.url}/T000/B000/sekrit-token` });
    // The stored secret is sealed (secret box), never in clear.
    const [stored] = await ctx.t.app.database.db.selectFrom('webhook_endpoints').select('secret').execute();
    expect(stored!.secret).toMatch(/^sealed:v1:/);
    expect(stored!.secret).not.toContain(secret.slice(6, 20));
    const rotated = (await ctx.call('POST', adminWebhookPath(endpoint.id, 'rotate'), {})).json<{ secret: string }>();
    await ctx.call('POST', adminWebhookPath(endpoint.id, 'disable'), {});
    await ctx.call('POST', adminWebhookPath(endpoint.id, 'enable'), {});
    await ctx.call('POST', adminWebhookPath(endpoint.id, 'remove'), {});
    const audit = (await listAudit(ctx.t.app.database.db, 20)).filter((a) => a.action.startsWith('webhook_'));
    expect(audit.map((a) => a.action).reverse()).toEqual(['webhook_created', 'webhook_secret_rotated', 'webhook_disabled', 'webhook_enabled', 'webhook_removed']);
    for (const entry of audit) {
      expect(entry.actorEmail).toBe('admin@example.com');
      expect(entry.detail).toMatchObject({ endpoint: endpoint.id, origin: `http://127.0.0.1:${ctx.receiver.port}`, by: 'admin' });
      const text = JSON.stringify(entry);
      for (const hidden of [secret, rotated.secret, 'sekrit-token', 'whsec_']) expect(text).not.toContain(hidden);
    }
    expect(await ctx.t.app.database.db.selectFrom('webhook_endpoints').selectAll().execute()).toHaveLength(0);
  });

  it('invite.sent with the invite, signup.erased (id only) with an admin delete', async () => {
    const smtp = await startTestSmtp(cleanups);
    const ctx = await setUpWebhooks(cleanups, dialect, { env: mailEnv(smtp.url) });
    const { secret, endpoint } = await addEndpoint(ctx, { events: ['invite.sent', 'signup.erased'] });
    const id = await signUp(ctx, 'vip@example.com');
    const invite = await ctx.call('POST', ADMIN_INVITE_PATH, { ids: [id] });
    expect(invite.statusCode, invite.body).toBe(200);
    await ctx.drain();
    const deleted = await ctx.call('POST', ADMIN_DELETE_PATH, { ids: [id] });
    expect(deleted.statusCode, deleted.body).toBe(200);
    await ctx.drain();
    const payloads = ctx.receiver.requests.map((r) => verifiedPayload(secret, r));
    expect(payloads.map((p) => p.type)).toEqual(['invite.sent', 'signup.erased']);
    expect(payloads[0]!.data).toMatchObject({ id, email: 'vip@example.com', status: 'invited' });
    expect(payloads[1]!.data).toMatchObject({ id, by: 'admin' });
    expect(JSON.stringify(payloads[1])).not.toContain('vip@');
    // The invite's stored event (it held the address) went with the entry.
    expect((await deliveriesOf(ctx, endpoint.id)).map((d) => d.eventType)).toEqual(['signup.erased']);
  });

  it('WEBHOOK_ALLOW_PRIVATE off: private literal IPs are refused, and a name resolving to loopback is never connected to', async () => {
    const ctx = await setUpWebhooks(cleanups, dialect, { env: { WEBHOOK_ALLOW_PRIVATE: '0' } });
    const port = ctx.receiver.port;
    for (const url of [
      `http://127.0.0.1:${port}/hook`,
      `http://10.1.2.3/hook`,
      `http://169.254.169.254/latest/meta-data`,
      `http://[::1]:${port}/hook`,
      `http://[::ffff:127.0.0.1]:${port}/hook`,
      `http://[fe80::1]/hook`,
      `http://0.0.0.0:${port}/hook`,
    ]) {
      const res = await ctx.call('POST', ADMIN_WEBHOOKS_PATH, { url });
      expect(res.statusCode, url).toBe(400);
      expect(res.json().error.code, url).toBe('private_address');
    }
    // A name is checked where it matters: on every address it resolves to, when connecting.
    const { endpoint } = await addEndpoint(ctx, { url: `http://localhost:${port}/hook` });
    await signUp(ctx, 'ssrf@example.com');
    await ctx.drain();
    const [delivery] = await deliveriesOf(ctx, endpoint.id);
    expect(delivery).toMatchObject({ status: 'queued', attempts: 1, responseStatus: null });
    expect(delivery!.lastError).toMatch(/localhost resolves to a non-public address/);
    expect(ctx.receiver.requests).toHaveLength(0);
  });

  it('npm run admin -- webhooks: add (secret once), list, disable, rotate, remove', async () => {
    const ctx = await setUpWebhooks(cleanups, dialect);
    const env = { DATABASE_URL: ctx.t.databaseUrl, LOG_LEVEL: 'silent', AUTH_SECRET_KEY_FILE: path.join(ctx.t.dataDir, 'auth-secret.key'), WEBHOOK_ALLOW_PRIVATE: '1' };
    const cli = (args: string[]) => runCliInProcess(run, ['webhooks', ...args], { env });

    const added = await cli(['add', ctx.receiver.url, '--events', 'signup.created,signup.erased']);
    expect(added.code, added.stderr).toBe(0);
    const secret = /whsec_\S+/.exec(added.stdout)![0];
    const id = /endpoint (\S+) added/.exec(added.stdout)![1]!;

    const listed = await cli(['list']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(id);
    expect(listed.stdout).toContain('signup.created,signup.erased');
    expect(listed.stdout).not.toContain('whsec_');

    // The server reads endpoints added elsewhere (here at once; every WEBHOOK_REFRESH_MS by itself).
    await ctx.t.app.webhooks.refresh();
    await signUp(ctx, 'cli@example.com');
    await ctx.drain();
    expect(verifiedPayload(secret, ctx.receiver.requests[0]!).type).toBe('signup.created');

    const rotated = await cli(['rotate', id]);
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(/whsec_\S+/.exec(rotated.stdout)![0]).not.toBe(secret);

    expect((await cli(['disable', id])).code).toBe(0);
    expect((await cli(['list'])).stdout).toMatch(/no \(Disabled by the command line\)/);
    expect((await cli(['remove', id])).code).toBe(0);
    expect((await cli(['list'])).stdout).toContain('No webhook endpoints.');

    const bad = await cli(['add', ctx.receiver.url, '--events', 'nope']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('Unknown event "nope"');
    const missing = await cli(['remove', UNKNOWN]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('There is no such webhook endpoint.');
    const audit = (await listAudit(ctx.t.app.database.db, 20)).filter((a) => a.action.startsWith('webhook_'));
    expect(audit.every((a) => a.detail.by === 'cli' && !JSON.stringify(a).includes('whsec_'))).toBe(true);
  });

  it('rotate-secret re-seals the webhook secrets with the new AUTH_SECRET_KEY', async () => {
    const oldKey = randomBytes(32).toString('base64');
    const newKey = randomBytes(32).toString('base64');
    const ctx = await setUpWebhooks(cleanups, dialect, { env: { AUTH_SECRET_KEY: oldKey } });
    const { endpoint, secret } = await addEndpoint(ctx);
    const rotated = (await ctx.call('POST', adminWebhookPath(endpoint.id, 'rotate'), {})).json<{ secret: string }>();
    const env = { DATABASE_URL: ctx.t.databaseUrl, LOG_LEVEL: 'silent', AUTH_SECRET_KEY: newKey, AUTH_SECRET_KEY_PREVIOUS: oldKey };
    const result = await runCliInProcess(run, ['rotate-secret'], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('Re-sealed 2 webhook secrets with the new AUTH_SECRET_KEY.');
    const row = await ctx.t.app.database.db.selectFrom('webhook_endpoints').selectAll().executeTakeFirstOrThrow();
    const newBox = createSecretBox(Buffer.from(newKey, 'base64'));
    expect(newBox.open(row.secret, `webhook:${endpoint.id}`)).toBe(rotated.secret);
    expect(newBox.open(row.previous_secret!, `webhook:${endpoint.id}`)).toBe(secret);
    expect(() => createSecretBox(Buffer.from(oldKey, 'base64')).open(row.secret, `webhook:${endpoint.id}`)).toThrow();
  });
});
