import Fastify, { type FastifyInstance } from 'fastify';
import { SignJWT, base64url, decodeJwt, decodeProtectedHeader, exportJWK, exportSPKI, generateKeyPair, importJWK, type JWK, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdmin, deleteAdmin } from '../../../src/server/auth/admins.js';
import { getAdminPrincipal, requireAdmin } from '../../../src/server/auth/require-admin.js';
import { registerErrorHandler } from '../../../src/server/http/errors.js';
import { createScratchPostgres, TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

const EMAIL = 'tokens@example.com';
const PASSWORD = 'correct-Horse-battery-42';

let t: TestApp;
let app: FastifyInstance;
/** A tiny app with one admin-only route, sharing the real app's database (as the admin API will). */
let guarded: FastifyInstance;
let realKid: string;
let realPrivateKey: CryptoKey;
let realPublicJwk: JWK;

interface Session {
  access_token: string;
  refresh_token: string;
  user: { id: string };
}

async function signIn(email = EMAIL): Promise<Session> {
  const res = await app.inject({
    method: 'POST',
    url: '/auth/v1/token?grant_type=password',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ email, password: PASSWORD }),
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Session;
}

/** Claims like ours, from a real session, with overrides. */
function claimsFrom(session: Session, overrides: JWTPayload = {}): JWTPayload {
  const base = decodeJwt(session.access_token);
  return { ...base, ...overrides };
}

async function signWith(key: CryptoKey | Uint8Array, header: Record<string, unknown>, claims: JWTPayload): Promise<string> {
  return new SignJWT(claims).setProtectedHeader(header as { alg: string }).sign(key);
}

function unsigned(header: Record<string, unknown>, claims: JWTPayload): string {
  const enc = (v: unknown) => base64url.encode(JSON.stringify(v));
  return `${enc(header)}.${enc(claims)}.`;
}

interface TokenCase {
  name: string;
  token: (s: Session) => Promise<string | null>;
  /** GoTrue answer on GET /auth/v1/user. */
  userStatus: number;
  userCode: string;
}

const now = () => Math.floor(Date.now() / 1000);

const cases: TokenCase[] = [
  { name: 'missing token', token: async () => null, userStatus: 401, userCode: 'no_authorization' },
  {
    name: 'expired (real key, exp in the past)',
    token: (s) => signWith(realPrivateKey, { alg: 'ES256', kid: realKid, typ: 'JWT' }, claimsFrom(s, { iat: now() - 7200, exp: now() - 60 })),
    userStatus: 403,
    userCode: 'bad_jwt',
  },
  {
    name: 'forged signature (another P-256 key, our kid)',
    token: async (s) => {
      const { privateKey } = await generateKeyPair('ES256');
      return signWith(privateKey, { alg: 'ES256', kid: realKid, typ: 'JWT' }, claimsFrom(s));
    },
    userStatus: 403,
    userCode: 'bad_jwt',
  },
  {
    name: 'tampered payload',
    token: async (s) => {
      const [h, , sig] = s.access_token.split('.');
      const evil = base64url.encode(JSON.stringify(claimsFrom(s, { email: 'evil@example.com' })));
      return `${h}.${evil}.${sig}`;
    },
    userStatus: 403,
    userCode: 'bad_jwt',
  },
  { name: 'alg none', token: async (s) => unsigned({ alg: 'none', kid: realKid, typ: 'JWT' }, claimsFrom(s)), userStatus: 403, userCode: 'bad_jwt' },
  {
    name: 'HS256 with the public key as secret (JWK text)',
    token: (s) => signWith(new TextEncoder().encode(JSON.stringify(realPublicJwk)), { alg: 'HS256', kid: realKid, typ: 'JWT' }, claimsFrom(s)),
    userStatus: 403,
    userCode: 'bad_jwt',
  },
  {
    name: 'HS256 with the public key as secret (PEM)',
    token: async (s) => {
      const publicKey = (await importJWK(realPublicJwk, 'ES256')) as CryptoKey;
      const pem = await exportSPKI(publicKey);
      return signWith(new TextEncoder().encode(pem), { alg: 'HS256', typ: 'JWT' }, claimsFrom(s));
    },
    userStatus: 403,
    userCode: 'bad_jwt',
  },
  {
    name: 'unknown kid',
    token: (s) => signWith(realPrivateKey, { alg: 'ES256', kid: crypto.randomUUID(), typ: 'JWT' }, claimsFrom(s)),
    userStatus: 403,
    userCode: 'bad_jwt',
  },
  {
    name: 'no kid',
    token: (s) => signWith(realPrivateKey, { alg: 'ES256', typ: 'JWT' }, claimsFrom(s)),
    userStatus: 403,
    userCode: 'bad_jwt',
  },
  {
    name: 'no exp claim',
    token: (s) => {
      const { exp: _exp, ...rest } = claimsFrom(s);
      return signWith(realPrivateKey, { alg: 'ES256', kid: realKid, typ: 'JWT' }, rest);
    },
    userStatus: 403,
    userCode: 'bad_jwt',
  },
  {
    name: 'sub not a UUID',
    token: (s) => signWith(realPrivateKey, { alg: 'ES256', kid: realKid, typ: 'JWT' }, claimsFrom(s, { sub: 'admin' })),
    userStatus: 400,
    userCode: 'bad_jwt',
  },
  {
    name: 'session_id of a session that does not exist',
    token: (s) => signWith(realPrivateKey, { alg: 'ES256', kid: realKid, typ: 'JWT' }, claimsFrom(s, { session_id: crypto.randomUUID() })),
    userStatus: 403,
    userCode: 'session_not_found',
  },
  {
    name: 'sub of a user that does not exist',
    token: (s) => signWith(realPrivateKey, { alg: 'ES256', kid: realKid, typ: 'JWT' }, claimsFrom(s, { sub: crypto.randomUUID() })),
    userStatus: 403,
    userCode: 'user_not_found',
  },
  {
    name: 'signed out (session deleted)',
    token: async (s) => {
      const res = await app.inject({ method: 'POST', url: '/auth/v1/logout?scope=local', headers: { authorization: `Bearer ${s.access_token}` } });
      expect(res.statusCode).toBe(204);
      return s.access_token;
    },
    userStatus: 403,
    userCode: 'session_not_found',
  },
];

describe.each(TEST_DIALECTS)('tokens (%s)', (dialect: TestDialect) => {
  beforeAll(async () => {
    t = await createTestApp({}, { dialect });
    app = t.app;
    await createAdmin(app.database.db, EMAIL, PASSWORD);
    const row = await app.database.db.selectFrom('auth_signing_keys').selectAll().executeTakeFirstOrThrow();
    realKid = row.kid;
    // Stored sealed (issue 8 point 7): the test opens it with the app's key to forge tokens.
    realPrivateKey = (await importJWK(JSON.parse(app.secretBox.open(row.private_jwk, `jwk:${row.kid}`)) as JWK, 'ES256')) as CryptoKey;
    realPublicJwk = JSON.parse(row.public_jwk) as JWK;

    guarded = Fastify({ logger: false });
    guarded.decorate('database', app.database);
    // requireAdmin reads the token lifetime, session limits and ADMIN_MFA from the app's configuration.
    guarded.decorate('config', app.config);
    registerErrorHandler(guarded);
    guarded.get('/admin-only', async (request) => requireAdmin(request));
    guarded.get('/maybe-admin', async (request) => ({ principal: await getAdminPrincipal(request) }));
    await guarded.ready();
  });
  afterAll(async () => {
    await guarded?.close();
    await t?.close();
  });

  describe('access-token verification: requireAdmin (401) and GET /auth/v1/user (GoTrue codes)', () => {
    it('accepts a valid token and returns the principal', async () => {
      const s = await signIn();
      const res = await guarded.inject({ method: 'GET', url: '/admin-only', headers: { authorization: `bearer ${s.access_token}` } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ userId: s.user.id, email: EMAIL, sessionId: decodeJwt(s.access_token).session_id, role: 'owner' });
      const maybe = await guarded.inject({ method: 'GET', url: '/maybe-admin', headers: { authorization: `Bearer ${s.access_token}` } });
      expect(maybe.json()).toMatchObject({ principal: { userId: s.user.id } });
      expect(decodeProtectedHeader(s.access_token).kid).toBe(realKid);
    });

    for (const c of cases) {
      it(`rejects: ${c.name}`, async () => {
        const s = await signIn();
        const token = await c.token(s);
        const headers = token === null ? {} : { authorization: `Bearer ${token}` };
        const guardedRes = await guarded.inject({ method: 'GET', url: '/admin-only', headers });
        expect(guardedRes.statusCode, guardedRes.body).toBe(401);
        expect(guardedRes.json()).toMatchObject({ error: { code: 'unauthorized', message: expect.any(String) } });
        const maybe = await guarded.inject({ method: 'GET', url: '/maybe-admin', headers });
        expect(maybe.json()).toEqual({ principal: null });
        const userRes = await app.inject({ method: 'GET', url: '/auth/v1/user', headers });
        expect(userRes.statusCode, userRes.body).toBe(c.userStatus);
        expect(userRes.json()).toMatchObject({ code: c.userCode });
        expect(userRes.headers['x-supabase-api-version']).toBe('2024-01-01');
      });
    }

    it('rejects a deleted admin', async () => {
      const email = 'gone@example.com';
      await createAdmin(app.database.db, email, PASSWORD);
      const s = await signIn(email);
      await deleteAdmin(app.database.db, email);
      const res = await guarded.inject({ method: 'GET', url: '/admin-only', headers: { authorization: `Bearer ${s.access_token}` } });
      expect(res.statusCode).toBe(401);
    });

    it('two instances creating the first key at once agree on one key', async () => {
      const { openDatabase } = await import('../../../src/server/db/database.js');
      const { migrateToLatest } = await import('../../../src/server/db/migrate.js');
      const { getKeyRing } = await import('../../../src/server/auth/keys.js');
      const scratch = dialect === 'postgres' ? await createScratchPostgres() : null;
      const config = scratch
        ? ({ dialect: 'postgres', connectionString: scratch.url } as const)
        : ({ dialect: 'sqlite', filename: `${t.dataDir}/race.db` } as const);
      const h1 = openDatabase(config);
      const h2 = openDatabase(config);
      try {
        await migrateToLatest(h1.db);
        const keyOptions = { secretBox: app.secretBox, tokenLifetimeSeconds: 3600 };
        const [r1, r2] = await Promise.all([getKeyRing(h1.db, keyOptions), getKeyRing(h2.db, keyOptions)]);
        expect(r1.signing.kid).toBe(r2.signing.kid);
        expect(await h1.db.selectFrom('auth_signing_keys').select('kid').execute()).toHaveLength(1);
      } finally {
        await h1.close();
        await h2.close();
        await scratch?.drop();
      }
    });

    it('the signing key survives a restart (stored in the database, shared by instances)', async () => {
      const before = (await app.inject({ method: 'GET', url: '/auth/v1/.well-known/jwks.json' })).json() as { keys: JWK[] };
      const { clearKeyCache } = await import('../../../src/server/auth/keys.js');
      clearKeyCache(app.database.db);
      const after = (await app.inject({ method: 'GET', url: '/auth/v1/.well-known/jwks.json' })).json() as { keys: JWK[] };
      expect(after).toEqual(before);
      const rows = await app.database.db.selectFrom('auth_signing_keys').select('kid').execute();
      expect(rows).toHaveLength(1);
      expect(await exportJWK((await importJWK(before.keys[0]!, 'ES256')) as CryptoKey)).toMatchObject({ x: realPublicJwk.x });
    });
  });
});
