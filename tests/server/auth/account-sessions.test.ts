import { randomUUID } from 'node:crypto';
import { decodeJwt } from 'jose';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listAudit } from '../../../src/server/audit/audit-log.js';
import { createAdmin } from '../../../src/server/auth/admins.js';
import { ADMIN_SESSIONS_PATH, ADMIN_SESSIONS_REVOKE_PATH, sessionListSchema, type SessionList } from '../../../src/shared/admin/sessions-api.js';
import { ADMIN_WAITLIST_PATH } from '../../../src/shared/admin/waitlist-api.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import type { AuthSession } from '../../support/sign-in.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

/**
 * ASVS 3.3.4: an admin lists their own live sessions and signs the others out through the admin
 * API (src/shared/admin/sessions-api.ts); another admin's sessions are never listed nor ended.
 */
const PASSWORD = 'correct-Horse-battery-42';
const UA = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36';

let counter = 0;
const sessionIdOf = (s: AuthSession) => decodeJwt(s.access_token).session_id as string;

describe.each(TEST_DIALECTS)('admin account sessions API (%s)', (dialect: TestDialect) => {
  let t: TestApp;
  let app: FastifyInstance;

  beforeAll(async () => {
    t = await createTestApp({ AUTH_IP_MAX_ATTEMPTS: '1000' }, { dialect });
    app = t.app;
  });
  afterAll(async () => {
    await t.close();
  });

  async function newAdmin() {
    counter += 1;
    const email = `account${counter}-${dialect}@example.com`;
    await createAdmin(app.database.db, email, PASSWORD);
    return email;
  }

  async function signInAs(email: string, userAgent?: string): Promise<AuthSession> {
    const res = await app.inject({
      method: 'POST',
      url: '/auth/v1/token?grant_type=password',
      headers: userAgent ? { 'user-agent': userAgent } : {},
      payload: { email, password: PASSWORD, gotrue_meta_security: {} },
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as AuthSession;
  }

  const list = (token: string) => app.inject({ method: 'GET', url: ADMIN_SESSIONS_PATH, headers: { authorization: `Bearer ${token}` } });
  const revoke = (token: string, payload: unknown) =>
    app.inject({ method: 'POST', url: ADMIN_SESSIONS_REVOKE_PATH, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
  const waitlistStatus = async (token: string) => (await app.inject({ method: 'GET', url: ADMIN_WAITLIST_PATH, headers: { authorization: `Bearer ${token}` } })).statusCode;

  function sessionsOf(res: LightMyRequestResponse): SessionList['sessions'] {
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    return sessionListSchema.parse(res.json()).sessions;
  }

  it('lists only the caller’s own live sessions, newest first, with the current one marked', async () => {
    const email = await newAdmin();
    const first = await signInAs(email, UA);
    const second = await signInAs(email);
    const other = await signInAs(await newAdmin(), UA);

    const sessions = sessionsOf(await list(second.access_token));
    expect(sessions.map((s) => s.id)).toEqual([sessionIdOf(second), sessionIdOf(first)]);
    expect(sessions.map((s) => s.current)).toEqual([true, false]);
    expect(sessions.map((s) => s.id)).not.toContain(sessionIdOf(other));
    const older = sessions[1]!;
    expect(older.user_agent).toBe(UA);
    expect(older.ip_address).toBe('127.0.0.1');
    expect(older.aal).toBe('aal1');
    expect(Number.isNaN(Date.parse(older.created_at))).toBe(false);
    expect(Number.isNaN(Date.parse(older.last_active_at))).toBe(false);
    expect(Object.keys(older).sort()).toEqual(['aal', 'created_at', 'current', 'id', 'ip_address', 'last_active_at', 'user_agent']);
  });

  it('signs out one named session, and writes the audit entry', async () => {
    const email = await newAdmin();
    const a = await signInAs(email);
    const b = await signInAs(email);
    const c = await signInAs(email);

    const res = await revoke(c.access_token, { ids: [sessionIdOf(a).toUpperCase()] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toEqual({ revoked: 1 });
    expect(await waitlistStatus(a.access_token)).toBe(401);
    expect(await waitlistStatus(b.access_token)).toBe(200);
    expect(sessionsOf(await list(c.access_token)).map((s) => s.id)).toEqual([sessionIdOf(c), sessionIdOf(b)]);

    const entry = (await listAudit(app.database.db, 20)).find((e) => e.action === 'session_revoked' && e.actorEmail === email);
    expect(entry?.detail).toEqual({ sessions: 'selected', sessions_ended: 1, by: 'admin_api' });
  });

  it('signs out all other sessions but keeps the current one', async () => {
    const email = await newAdmin();
    const a = await signInAs(email);
    const b = await signInAs(email);
    const c = await signInAs(email);
    const bystander = await signInAs(await newAdmin());

    const res = await revoke(c.access_token, { others: true });
    expect(res.json()).toEqual({ revoked: 2 });
    expect(await waitlistStatus(a.access_token)).toBe(401);
    expect(await waitlistStatus(b.access_token)).toBe(401);
    expect(await waitlistStatus(c.access_token)).toBe(200);
    expect(await waitlistStatus(bystander.access_token)).toBe(200);
    expect(sessionsOf(await list(c.access_token)).map((s) => s.id)).toEqual([sessionIdOf(c)]);
    expect((await revoke(c.access_token, { others: true })).json()).toEqual({ revoked: 0 });
  });

  it('never ends another admin’s session, and refuses to end the current one', async () => {
    const mine = await signInAs(await newAdmin());
    const theirs = await signInAs(await newAdmin());

    const res = await revoke(mine.access_token, { ids: [sessionIdOf(theirs), randomUUID()] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ revoked: 0 });
    expect(await waitlistStatus(theirs.access_token)).toBe(200);

    const current = await revoke(mine.access_token, { ids: [sessionIdOf(mine)] });
    expect(current.statusCode).toBe(400);
    expect(current.json()).toMatchObject({ error: { code: 'current_session' } });
    expect(await waitlistStatus(mine.access_token)).toBe(200);
  });

  it('answers 401 without a valid admin token, before reading the body', async () => {
    for (const res of [
      await app.inject({ method: 'GET', url: ADMIN_SESSIONS_PATH }),
      await app.inject({ method: 'GET', url: ADMIN_SESSIONS_PATH, headers: { authorization: 'Bearer not.a.jwt' } }),
      await app.inject({ method: 'POST', url: ADMIN_SESSIONS_REVOKE_PATH, headers: { 'content-type': 'application/json' }, payload: '{"others":true}' }),
      await app.inject({ method: 'POST', url: ADMIN_SESSIONS_REVOKE_PATH, headers: { 'content-type': 'application/json' }, payload: '{not json' }),
    ]) {
      expect(res.statusCode, res.body).toBe(401);
      expect(res.json()).toMatchObject({ error: { code: 'unauthorized' } });
      expect(res.headers['cache-control']).toBe('no-store');
    }
    // A signed-out session is refused too.
    const email = await newAdmin();
    const gone = await signInAs(email);
    const current = await signInAs(email);
    await revoke(current.access_token, { others: true });
    expect((await list(gone.access_token)).statusCode).toBe(401);
  });

  it('answers hostile or malformed bodies with a 4xx and ends nothing', async () => {
    const email = await newAdmin();
    const other = await signInAs(email);
    const { access_token: token } = await signInAs(email);
    const bodies: unknown[] = [
      {},
      { others: false },
      { others: 'true' },
      { ids: [] },
      { ids: ['not-a-uuid'] },
      { ids: ["' OR 1=1 --"] },
      { ids: 'all' },
      { ids: [sessionIdOf(other)], others: true },
      { ids: Array.from({ length: 101 }, () => randomUUID()) },
      [],
      null,
      '__proto__',
    ];
    for (const body of bodies) {
      const res = await revoke(token, body);
      expect(res.statusCode, `${JSON.stringify(body)} -> ${res.body}`).toBeGreaterThanOrEqual(400);
      expect(res.statusCode).toBeLessThan(500);
    }
    const huge = await app.inject({
      method: 'POST',
      url: ADMIN_SESSIONS_REVOKE_PATH,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ ids: [randomUUID()], pad: 'x'.repeat(100_000) }),
    });
    expect(huge.statusCode).toBe(413);
    expect(await waitlistStatus(other.access_token)).toBe(200);
  });
});
