import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, rawSqliteOf, scrubDeletedRows, type DatabaseHandle } from '../../../src/server/db/database.js';
import { migrateToLatest } from '../../../src/server/db/migrate.js';
import { createAdmin } from '../../../src/server/auth/admins.js';
import { run as adminCli } from '../../../src/server/cli/admin.js';
import { startMailRetention } from '../../../src/server/mail/outbox.js';
import { runCliInProcess } from '../../support/server-process.js';
import { describeWhen, openTestDatabase } from '../../support/databases.js';

/**
 * Security review, finding 7: erased rows must not stay readable in the SQLite files (free pages,
 * freed cells, the WAL). Each test reads the database's bytes on disk after the delete.
 */

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function sqliteFile(): Promise<{ file: string; handle: DatabaseHandle }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'waitlist-erasure-'));
  const file = path.join(dir, 'erasure.db');
  const handle = openDatabase({ dialect: 'sqlite', filename: file });
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => handle.close());
  await migrateToLatest(handle.db);
  return { file, handle };
}

/** Whether `marker` is anywhere in the database file or its WAL. */
function onDisk(file: string, marker: string): { db: boolean; wal: boolean } {
  const bytes = (name: string) => (fs.existsSync(name) ? fs.readFileSync(name) : Buffer.alloc(0));
  return { db: bytes(file).includes(marker), wal: bytes(`${file}-wal`).includes(marker) };
}

async function addEntries(handle: DatabaseHandle, emails: string[]): Promise<void> {
  const now = new Date().toISOString();
  await handle.db.insertInto('waitlist').values(emails.map((email) => ({ id: randomUUID(), email, created_at: now }))).execute();
}

const marker = () => `erase-me-${randomBytes(8).toString('hex')}@example.com`;

describe('deleted rows leave no trace on disk (SQLite)', () => {
  it("the server's connection has secure_delete on", async () => {
    const { handle } = await sqliteFile();
    expect(rawSqliteOf(handle.db)!.pragma('secure_delete', { simple: true })).toBe(1);
  });

  it('a row checkpointed into the database file is gone from the file and the WAL after delete + scrub', async () => {
    const { file, handle } = await sqliteFile();
    const erased = marker();
    await addEntries(handle, [erased, ...Array.from({ length: 50 }, (_, i) => `kept-${i}@example.com`)]);
    rawSqliteOf(handle.db)!.pragma('wal_checkpoint(TRUNCATE)');
    expect(onDisk(file, erased).db).toBe(true);

    await handle.db.deleteFrom('waitlist').where('email', '=', erased).execute();
    expect(await scrubDeletedRows(handle.db)).toBe(true);
    expect(onDisk(file, erased)).toEqual({ db: false, wal: false });
    expect(fs.statSync(`${file}-wal`).size).toBe(0);
    // The other rows are untouched.
    expect(await handle.db.selectFrom('waitlist').select('email').execute()).toHaveLength(50);
  });

  it('a row that only ever lived in the WAL is gone after a bulk delete + scrub', async () => {
    const { file, handle } = await sqliteFile();
    const erased = Array.from({ length: 20 }, marker);
    await addEntries(handle, [...erased, 'kept@example.com']);
    expect(onDisk(file, erased[0]!).wal).toBe(true);

    await handle.db.deleteFrom('waitlist').where('email', 'in', erased).execute();
    expect(await scrubDeletedRows(handle.db)).toBe(true);
    for (const email of erased) expect(onDisk(file, email)).toEqual({ db: false, wal: false });
  });

  it('waits for a reader holding the WAL (an export), without blocking, then scrubs', async () => {
    const { file, handle } = await sqliteFile();
    const erased = marker();
    await addEntries(handle, [erased, 'kept@example.com']);
    // Another connection (an export thread, say) reads in a transaction for a while.
    const reader = new SQLite(file, { readonly: true });
    cleanups.push(() => void reader.close());
    reader.exec('BEGIN');
    reader.prepare('SELECT count(*) FROM waitlist').get();
    await handle.db.deleteFrom('waitlist').where('email', '=', erased).execute();

    let ticks = 0;
    const ticker = setInterval(() => (ticks += 1), 10);
    const scrubbing = scrubDeletedRows(handle.db);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(onDisk(file, erased).wal).toBe(true);
    reader.exec('COMMIT');
    expect(await scrubbing).toBe(true);
    clearInterval(ticker);
    // The event loop kept running while the reader held the WAL.
    expect(ticks).toBeGreaterThan(20);
    expect(onDisk(file, erased)).toEqual({ db: false, wal: false });
  });
});

describe('where the server scrubs by itself (SQLite)', () => {
  it('the outbox retention: expired messages (addresses, bodies) are off the disk once purged', async () => {
    const { file, handle } = await sqliteFile();
    const to = marker();
    const old = new Date(Date.now() - 400 * 24 * 3600_000).toISOString();
    await handle.db
      .insertInto('mail_outbox')
      .values({ id: randomUUID(), message_id: `<${randomUUID()}@x.example>`, kind: 'test', to_address: to, subject: 'Hi', text_body: 'Body', html_body: null, template: null, template_data: null, status: 'sent', next_attempt_at: old, created_at: old, sent_at: old })
      .execute();
    rawSqliteOf(handle.db)!.pragma('wal_checkpoint(TRUNCATE)');
    const log = { info: () => undefined, error: (obj: object) => expect.fail(JSON.stringify(obj)) };
    const stop = await startMailRetention(handle.db, 30, log);
    stop();
    expect(await handle.db.selectFrom('mail_outbox').select('id').execute()).toEqual([]);
    expect(onDisk(file, to)).toEqual({ db: false, wal: false });
  });

  it('npm run admin -- delete: the admin’s address is off the disk', async () => {
    const { file, handle } = await sqliteFile();
    const email = marker();
    await createAdmin(handle.db, email, 'correct-Horse-battery-42');
    rawSqliteOf(handle.db)!.pragma('wal_checkpoint(TRUNCATE)');
    expect(onDisk(file, email).db).toBe(true);
    const res = await runCliInProcess(adminCli, ['delete', email], { env: { DATABASE_URL: `file:${file}`, LOG_LEVEL: 'silent' } });
    expect(res.code, res.stderr).toBe(0);
    expect(onDisk(file, email)).toEqual({ db: false, wal: false });
  });
});

describeWhen(Boolean(process.env.TEST_DATABASE_URL))('scrubDeletedRows on PostgreSQL', () => {
  it('has nothing to do in the server: it says so (VACUUM is the operator’s)', async () => {
    const t = await openTestDatabase('postgres');
    cleanups.push(() => t.close());
    expect(await scrubDeletedRows(t.handle.db)).toBe(false);
  });
});
