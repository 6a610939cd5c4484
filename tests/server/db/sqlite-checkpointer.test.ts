import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import SQLite from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase, rawSqliteOf, sqliteCheckpointerOf, type DatabaseHandle } from '../../../src/server/db/database.js';
import { migrateToLatest } from '../../../src/server/db/migrate.js';

/**
 * WAL checkpoints in their own thread (db/sqlite-checkpointer.ts): the server's connection never
 * checkpoints on commit, the thread backfills what was written, and a lost thread hands the work
 * back to SQLite's own checkpoints.
 */
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'checkpointer-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function open(name: string, warnings: string[] = []): DatabaseHandle {
  return openDatabase({ dialect: 'sqlite', filename: path.join(dir, name) }, { backgroundCheckpoints: { warn: (_obj, msg) => warnings.push(msg) } });
}

/** About 4,000 WAL pages of rows (SQLite would have checkpointed on commit four times). */
async function writeRows(handle: DatabaseHandle, batches = 40): Promise<void> {
  await sql`CREATE TABLE IF NOT EXISTS filler (id INTEGER PRIMARY KEY, body TEXT NOT NULL)`.execute(handle.db);
  for (let b = 0; b < batches; b++) {
    await handle.db.transaction().execute(async (trx) => {
      for (let i = 0; i < 100; i++) await sql`INSERT INTO filler (body) VALUES (${'x'.repeat(4000)})`.execute(trx);
    });
  }
}

describe('SQLite checkpoints in a thread of their own', () => {
  it('the connection never checkpoints on commit; the thread backfills every written page, on its schedule', async () => {
    const handle = open('schedule.db');
    await migrateToLatest(handle.db);
    const sqlite = rawSqliteOf(handle.db)!;
    expect(sqlite.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    const checkpointer = sqliteCheckpointerOf(handle.db)!;
    const before = checkpointer.checkpoints();
    await writeRows(handle);
    // Nothing asked: the thread's timer notices the writes.
    await expect.poll(() => checkpointer.checkpoints(), { timeout: 10_000 }).toBeGreaterThan(before);
    const answer = await checkpointer.checkpointNow();
    expect(answer).toMatchObject({ type: 'checkpointed', busy: 0 });
    if (answer.type === 'checkpointed') expect(answer.checkpointed).toBe(answer.log);
    await handle.close();

    // Closed cleanly: the WAL is gone and another connection reads every row.
    expect(fs.existsSync(path.join(dir, 'schedule.db-wal'))).toBe(false);
    const reader = new SQLite(path.join(dir, 'schedule.db'), { readonly: true });
    expect(reader.prepare('SELECT count(*) FROM filler').pluck().get()).toBe(4000);
    reader.close();
  });

  it('under writes that never stop, the WAL still starts over from its beginning (the second pass holds the connection)', async () => {
    const handle = open('steady.db');
    await sql`CREATE TABLE filler (id INTEGER PRIMARY KEY, body TEXT NOT NULL)`.execute(handle.db);
    const wal = path.join(dir, 'steady.db-wal');
    // The WAL header's checkpoint sequence number (bytes 12-15) goes up each time SQLite starts the WAL over.
    const restarts = () => {
      const header = Buffer.alloc(16);
      const fd = fs.openSync(wal, 'r');
      fs.readSync(fd, header, 0, 16, 0);
      fs.closeSync(fd);
      return header.readUInt32BE(12);
    };
    const first = restarts();
    // A write every turn of the event loop, as a stream of signups does (their WAL syncs are off the
    // connection too: synchronous=OFF stands for that here): a PASSIVE checkpoint alone never reaches the end.
    rawSqliteOf(handle.db)!.pragma('synchronous = OFF');
    let writing = true;
    // Writes until the WAL starts over (a write is what starts it over, after a complete checkpoint,
    // so they must go on past the thread's first rounds however fast the machine: about one a
    // millisecond), over the same 2,000 rows, and never past a WAL of 64 MB: were it never to start
    // over, the poll below fails then rather than filling the machine's memory (/dev/shm).
    const writer = (async () => {
      for (let n = 0; writing; n++) {
        await sql`INSERT OR REPLACE INTO filler (id, body) VALUES (${n % 2000}, ${'x'.repeat(2000)})`.execute(handle.db);
        await new Promise((resolve) => setTimeout(resolve, 1));
        if (n % 100 === 0 && fs.statSync(wal).size > 64 * 1024 * 1024) break;
      }
    })();
    try {
      await expect.poll(restarts, { timeout: 10_000, interval: 50 }).toBeGreaterThan(first);
    } finally {
      writing = false;
      await writer;
      await handle.close();
    }
  });

  it('a lost thread gives the checkpoints back to SQLite, with a warning', async () => {
    const warnings: string[] = [];
    const handle = open('lost.db', warnings);
    const sqlite = rawSqliteOf(handle.db)!;
    await sqliteCheckpointerOf(handle.db)!.crashForTest();
    expect(warnings).toEqual(['sqlite: the checkpoint thread is gone; checkpoints run on commit again']);
    expect(sqlite.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    await writeRows(handle, 5);
    await handle.close();
  });

  it('an in-memory database and a database opened without the option keep SQLite’s own checkpoints', async () => {
    const memory = openDatabase({ dialect: 'sqlite', filename: ':memory:' }, { backgroundCheckpoints: { warn: () => {} } });
    expect(sqliteCheckpointerOf(memory.db)).toBeUndefined();
    await memory.close();
    const plain = openDatabase({ dialect: 'sqlite', filename: path.join(dir, 'plain.db') });
    expect(sqliteCheckpointerOf(plain.db)).toBeUndefined();
    expect(rawSqliteOf(plain.db)!.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    await plain.close();
  });
});
