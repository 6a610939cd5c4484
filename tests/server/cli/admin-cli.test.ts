import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../../src/server/cli/admin.js';
import { runCliInProcess, runProcess, type ProcessResult } from '../../support/server-process.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';
import { postPasswordGrant } from '../../support/sign-in.js';

const root = path.resolve(import.meta.dirname, '../../..');
const PASSWORD = 'correct-Horse-battery-42';

let dir: string;
let dbUrl: string;

function cli(args: string[], stdin = ''): Promise<ProcessResult> {
  return runCliInProcess(run, args, { env: { DATABASE_URL: dbUrl, LOG_LEVEL: 'silent' }, stdin });
}

/** The real entry point, `npm run admin -- …`, as an operator runs it. */
function spawnCli(args: string[], stdin = ''): Promise<ProcessResult> {
  return runProcess('npm', ['run', '--silent', 'admin', '--', ...args], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: dbUrl, LOG_LEVEL: 'silent' },
    stdin,
  });
}

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'admin-cli-'));
  dbUrl = `file:${path.join(dir, 'cli.db')}`;
});
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('npm run admin', () => {
  it('create, list, duplicate, weak password, bad usage', { timeout: 120_000 }, async () => {
    const empty = await cli(['list']);
    expect(empty.code).toBe(0);
    expect(empty.stdout).toMatch(/No admins yet/);

    const created = await spawnCli(['create', 'Boss@Example.com'], `${PASSWORD}\nignored second line\n`);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toContain('Created admin boss@example.com');

    const dup = await cli(['create', 'boss@example.com'], `${PASSWORD}\n`);
    expect(dup.code).toBe(1);
    expect(dup.stderr).toMatch(/already exists/);

    const weak = await cli(['create', 'weak@example.com'], 'short\n');
    expect(weak.code).toBe(1);
    expect(weak.stderr).toMatch(/at least 12 characters/);

    const noPassword = await cli(['create', 'nopass@example.com'], '');
    expect(noPassword.code).toBe(1);

    const badEmail = await cli(['create', 'not-an-email'], `${PASSWORD}\n`);
    expect(badEmail.code).toBe(1);
    expect(badEmail.stderr).toMatch(/not a valid e-mail/);

    const unknown = await spawnCli(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/Unknown command/);

    const list = await cli(['list']);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/Email\s+Created\s+Last sign-in\s+Sessions/);
    expect(list.stdout).toMatch(/boss@example\.com\s+\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}Z\s+never\s+0/);
    expect(list.stdout).not.toContain('weak@example.com');
    // The password is never echoed.
    expect(created.stdout + created.stderr + list.stdout).not.toContain(PASSWORD);
  });

  it('the server accepts the account; set-password revokes sessions; audit shows sign-ins; delete removes it', { timeout: 120_000 }, async () => {
    // The real app on the same database file.
    let t: TestApp = await createTestApp({ DATABASE_URL: dbUrl });
    const signIn = (password: string) => postPasswordGrant(t.app, { email: 'boss@example.com', password });
    const ok = await signIn(PASSWORD);
    expect(ok.statusCode, ok.body).toBe(200);
    expect((await signIn('wrong-password-123')).statusCode).toBe(400);
    const { access_token } = ok.json() as { access_token: string };
    await t.close();

    const list = await cli(['list']);
    expect(list.stdout).toMatch(/boss@example\.com\s+\S+ \S+\s+\d{4}-\d{2}-\d{2} \S+\s+1/);

    const audit = await cli(['audit', '--limit', '5']);
    expect(audit.code, audit.stderr).toBe(0);
    const lines = audit.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/Time\s+Action\s+Actor\s+IP\s+Detail/);
    // Newest first: the failed attempt came after the successful one.
    expect(lines[2]).toMatch(/sign_in_failed\s+boss@example\.com/);
    expect(lines[3]).toMatch(/sign_in\s+boss@example\.com/);
    expect((await cli(['audit', '--limit', 'x'])).code).toBe(2);

    const unknownAdmin = await cli(['set-password', 'nobody@example.com'], `${PASSWORD}\n`);
    expect(unknownAdmin.code).toBe(1);
    expect(unknownAdmin.stderr).toMatch(/No admin with the e-mail nobody@example.com/);

    const newPassword = 'a-Brand-new-passphrase-9';
    const set = await cli(['set-password', 'boss@example.com'], `${newPassword}\n`);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toMatch(/1 session signed out/);

    t = await createTestApp({ DATABASE_URL: dbUrl });
    const user = await t.app.inject({ method: 'GET', url: '/auth/v1/user', headers: { authorization: `Bearer ${access_token}` } });
    expect(user.statusCode).toBe(403);
    expect(user.json()).toMatchObject({ code: 'session_not_found' });
    expect((await signIn(PASSWORD)).statusCode).toBe(400);
    expect((await signIn(newPassword)).statusCode).toBe(200);
    await t.close();

    const del = await cli(['delete', 'boss@example.com']);
    expect(del.code, del.stderr).toBe(0);
    const delAgain = await cli(['delete', 'boss@example.com']);
    expect(delAgain.code).toBe(1);
    expect(delAgain.stderr).toMatch(/No admin/);
    t = await createTestApp({ DATABASE_URL: dbUrl });
    expect(await t.app.database.db.selectFrom('admin_sessions').selectAll().execute()).toEqual([]);
    expect((await signIn(newPassword)).statusCode).toBe(400);
    await t.close();
  });
});
