import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodeProtectedHeader, type JWK } from 'jose';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAdmin } from '../../../src/server/auth/admins.js';
import { clearKeyCache, retirementDelayMs } from '../../../src/server/auth/keys.js';
import { createSecretBox, loadOrCreateKeyFile } from '../../../src/server/crypto/secret-box.js';
import { run as runAdminCli } from '../../../src/server/cli/admin.js';
import { run as runDbCli } from '../../../src/server/cli/db.js';
import { openDatabase } from '../../../src/server/db/database.js';
import { migrateToLatest } from '../../../src/server/db/migrate.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { runCliInProcess } from '../../support/server-process.js';
import { signIn } from '../../support/sign-in.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

const EMAIL = 'keys@example.com';
const PASSWORD = 'correct-Horse-battery-42';

const kidOf = (token: string) => decodeProtectedHeader(token).kid;

describe.each(TEST_DIALECTS)('signing keys at rest (%s)', (dialect: TestDialect) => {
  const secretKey = randomBytes(32).toString('base64');
  let t: TestApp;

  const keyRows = () => t.app.database.db.selectFrom('auth_signing_keys').selectAll().orderBy('generation').execute();
  const getUser = (app: TestApp['app'], token: string) =>
    app.inject({ method: 'GET', url: '/auth/v1/user', headers: { authorization: `Bearer ${token}` } });
  const jwksKids = async (app: TestApp['app']) =>
    ((await app.inject({ method: 'GET', url: '/auth/v1/.well-known/jwks.json' })).json() as { keys: JWK[] }).keys.map((k) => k.kid);

  beforeAll(async () => {
    t = await createTestApp({ AUTH_SECRET_KEY: secretKey }, { dialect });
    await createAdmin(t.app.database.db, EMAIL, PASSWORD);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('stores the private JWK sealed: a dump without the secret key cannot open it', async () => {
    const [row] = await keyRows();
    expect(t.app.secretBox.isSealed(row!.private_jwk)).toBe(true);
    expect(row!.private_jwk).not.toContain('"d"');
    // Another key fails, and so does the right key for another row (the kid is bound).
    expect(() => createSecretBox(randomBytes(32)).open(row!.private_jwk, `jwk:${row!.kid}`)).toThrow();
    expect(() => t.app.secretBox.open(row!.private_jwk, `jwk:${crypto.randomUUID()}`)).toThrow();
    const privateJwk = JSON.parse(t.app.secretBox.open(row!.private_jwk, `jwk:${row!.kid}`)) as JWK;
    expect(privateJwk).toMatchObject({ kty: 'EC', crv: 'P-256', d: expect.any(String), x: (JSON.parse(row!.public_jwk) as JWK).x });
  });

  it('seals, in place, a key an earlier version stored in clear, and replaces it; its tokens keep working', async () => {
    const before = await signIn(t.app, { email: EMAIL, password: PASSWORD });
    const [row] = await keyRows();
    const clear = t.app.secretBox.open(row!.private_jwk, `jwk:${row!.kid}`);
    await t.app.database.db.updateTable('auth_signing_keys').set({ private_jwk: clear }).where('kid', '=', row!.kid).execute();
    clearKeyCache(t.app.database.db); // as a restart would

    const after = await signIn(t.app, { email: EMAIL, password: PASSWORD });
    const [sealed, replacement] = await keyRows();
    // Security review, finding 9: older backups hold that key in clear, so a new one signs from now on.
    expect(await keyRows()).toHaveLength(2);
    expect(sealed!.kid).toBe(row!.kid);
    expect(t.app.secretBox.isSealed(sealed!.private_jwk)).toBe(true);
    expect(t.app.secretBox.open(sealed!.private_jwk, `jwk:${sealed!.kid}`)).toBe(clear);
    expect(kidOf(after.access_token)).toBe(replacement!.kid);
    expect((await getUser(t.app, before.access_token)).statusCode).toBe(200);
    // The next tests rotate from one key, as before: the replacement's predecessor is set aside.
    await t.app.database.db.deleteFrom('auth_signing_keys').where('kid', '=', row!.kid).execute();
    await t.app.database.db.updateTable('auth_signing_keys').set({ generation: 1 }).where('kid', '=', replacement!.kid).execute();
    clearKeyCache(t.app.database.db);
  });

  it('admin rotate-key: the new key signs; the previous one verifies until its tokens expired, then it is retired', async () => {
    const old = await signIn(t.app, { email: EMAIL, password: PASSWORD });
    const oldKid = kidOf(old.access_token)!;

    // Run with another secret key than the server's, it refuses and changes nothing.
    const mismatch = await runCliInProcess(runAdminCli, ['rotate-key'], {
      env: { DATABASE_URL: t.databaseUrl, AUTH_SECRET_KEY: randomBytes(32).toString('base64'), LOG_LEVEL: 'silent' },
    });
    expect(mismatch.code).toBe(1);
    expect(mismatch.stderr).toMatch(/none of the current signing keys opens with this secret key.*Nothing was changed/);
    expect(await keyRows()).toHaveLength(1);

    const rotated = await runCliInProcess(runAdminCli, ['rotate-key'], {
      env: { DATABASE_URL: t.databaseUrl, AUTH_SECRET_KEY: secretKey, LOG_LEVEL: 'silent' },
    });
    expect(rotated.code, rotated.stderr).toBe(0);
    const rows = await keyRows();
    expect(rows.map((r) => [r.kid, r.generation, r.retired_at])).toEqual([
      [oldKid, 1, null],
      [expect.any(String), 2, null],
    ]);
    const newKid = rows[1]!.kid;
    expect(t.app.secretBox.isSealed(rows[1]!.private_jwk)).toBe(true);
    expect(rotated.stdout).toContain(`New signing key ${newKid} (generation 2) signs from now on.`);
    expect(rotated.stdout).toContain(`Key ${oldKid} keeps verifying the tokens it signed until`);

    clearKeyCache(t.app.database.db); // the ring's periodic re-read
    const fresh = await signIn(t.app, { email: EMAIL, password: PASSWORD });
    expect(kidOf(fresh.access_token)).toBe(newKid);
    expect((await getUser(t.app, old.access_token)).statusCode).toBe(200);
    expect(await jwksKids(t.app)).toEqual([newKid, oldKid]);

    // Once every token the old key signed has expired (JWT lifetime + re-read + skew), the next load retires it.
    const replacedLongAgo = new Date(Date.now() - retirementDelayMs(t.config.auth.jwtExpirySeconds) - 1000).toISOString();
    await t.app.database.db.updateTable('auth_signing_keys').set({ created_at: replacedLongAgo }).where('kid', '=', newKid).execute();
    clearKeyCache(t.app.database.db);
    expect(await jwksKids(t.app)).toEqual([newKid]);
    const retired = (await keyRows()).find((r) => r.kid === oldKid)!;
    expect(retired.retired_at).not.toBeNull();
    const refused = await getUser(t.app, old.access_token);
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'bad_jwt' });
    expect((await getUser(t.app, fresh.access_token)).statusCode).toBe(200);
  });

  it('a server with another secret key cannot sign with the stored key: it makes its own, and earlier tokens still verify', async () => {
    const session = await signIn(t.app, { email: EMAIL, password: PASSWORD });
    const other = await createTestApp({ DATABASE_URL: t.databaseUrl, AUTH_SECRET_KEY: randomBytes(32).toString('hex') });
    try {
      const theirs = await signIn(other.app, { email: EMAIL, password: PASSWORD });
      expect(kidOf(theirs.access_token)).not.toBe(kidOf(session.access_token));
      const newest = (await keyRows()).at(-1)!;
      expect(newest.kid).toBe(kidOf(theirs.access_token));
      expect(() => t.app.secretBox.open(newest.private_jwk, `jwk:${newest.kid}`)).toThrow();
      expect((await getUser(other.app, session.access_token)).statusCode).toBe(200);
    } finally {
      await other.close();
    }
  });
});

describe('owner-only files, whatever the umask', () => {
  let dir: string;
  let umask: number;
  const mode = (file: string) => fs.statSync(file).mode & 0o777;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'owner-only-'));
    umask = process.umask(0o000);
  });
  afterEach(() => {
    process.umask(umask);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the generated key file is 0600 in a 0700 directory, and stays so', () => {
    const file = path.join(dir, 'secrets', 'auth-secret.key');
    const key = loadOrCreateKeyFile(file);
    expect(key).toHaveLength(32);
    expect(mode(file)).toBe(0o600);
    expect(mode(path.dirname(file))).toBe(0o700);
    expect(loadOrCreateKeyFile(file).equals(key)).toBe(true);
    expect(mode(file)).toBe(0o600);
    expect(fs.readdirSync(path.dirname(file))).toEqual(['auth-secret.key']);
  });

  it('the SQLite database and its -wal and -shm files are 0600, in a 0700 data directory', async () => {
    const filename = path.join(dir, 'data', 'waitlist.db');
    const handle = openDatabase({ dialect: 'sqlite', filename });
    try {
      await migrateToLatest(handle.db);
      await createAdmin(handle.db, EMAIL, PASSWORD);
      for (const file of [filename, `${filename}-wal`, `${filename}-shm`]) {
        expect(fs.existsSync(file), file).toBe(true);
        expect(mode(file), file).toBe(0o600);
      }
      expect(mode(path.dirname(filename))).toBe(0o700);
    } finally {
      await handle.close();
    }
  });

  it('npm run db -- backup writes a 0600 file', async () => {
    const filename = path.join(dir, 'live.db');
    const handle = openDatabase({ dialect: 'sqlite', filename });
    await migrateToLatest(handle.db);
    await handle.close();
    const result = await runCliInProcess(runDbCli, ['backup', 'copy.db'], { env: { DATABASE_URL: `file:${filename}`, LOG_LEVEL: 'silent' }, cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    expect(mode(path.join(dir, 'copy.db'))).toBe(0o600);
  });
});
