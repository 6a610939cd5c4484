import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresAdapter, PostgresDialect, SqliteDialect } from 'kysely';
import type pg from 'pg';
import { optionalModule } from '../runtime/optional-module.js';
import { startSqliteCheckpointer, type CheckpointLog, type SqliteCheckpointer } from './sqlite-checkpointer.js';
import type { DatabaseConfig } from '../config.js';
import type { Database } from './schema.js';

export type Dialect = DatabaseConfig['dialect'];

export interface DatabaseHandle {
  db: Kysely<Database>;
  dialect: Dialect;
  close(): Promise<void>;
}

/**
 * Creates the database file owner-only (0600) before SQLite opens it, in a directory created 0700:
 * it holds personal data and password hashes. SQLite gives its -wal, -shm and -journal files the
 * database file's permissions, so they are owner-only too, whatever the umask. An existing file's
 * permissions are left as they are (never widened).
 */
export function createOwnerOnlyFile(filename: string): void {
  fs.mkdirSync(path.dirname(filename), { recursive: true, mode: 0o700 });
  try {
    fs.closeSync(fs.openSync(filename, 'wx', 0o600));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
}

/**
 * The connection's page cache, in KiB: SQLite's own default. better-sqlite3 builds SQLite with 16 MiB,
 * which a stream of signups fills with index pages within seconds, 14 MB of the server's memory for
 * copies of pages the operating system's cache holds anyway (a miss costs a read from that cache,
 * not from the disk). Decision record 013.
 */
export const SQLITE_CACHE_KIB = 2000;

function openSqlite(filename: string): SQLite.Database {
  if (filename !== ':memory:') createOwnerOnlyFile(filename);
  const sqlite = new SQLite(filename);
  // Order matters: busy_timeout first so the WAL switch itself waits for other writers.
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('journal_mode = WAL');
  // FULL, not NORMAL: a signup answered 201 must survive a power cut, not only a process crash.
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma(`cache_size = -${SQLITE_CACHE_KIB}`);
  // A deleted row's bytes are overwritten with zeros, not left in a free page or cell for a copy of
  // the file to reveal (an erased person's address, a revoked session). The WAL still holds the
  // pages as they were until it is reset: scrubDeletedRows.
  sqlite.pragma('secure_delete = ON');
  return sqlite;
}

/** The PostgreSQL driver, loaded only when a PostgreSQL database is opened. */
const loadPg = optionalModule<typeof pg>('pg');

const sqliteHandles = new WeakMap<Kysely<any>, SQLite.Database>();
/** The WAL file descriptors sqliteWalSync opened, closed with their connection (openDatabase's close). */
const walFds = new WeakMap<SQLite.Database, number>();

/**
 * An fdatasync of the connection's WAL file, on the thread pool. After a COMMIT made with
 * synchronous=NORMAL it makes that commit as durable as synchronous=FULL would have (in WAL mode,
 * FULL is NORMAL plus a sync of the WAL at each commit), without blocking the event loop; the
 * signups' group commit uses it (signup/repository.ts). Null when the connection is not in WAL
 * mode (an in-memory database), where commits keep their own setting. The file is opened on first
 * use (the first commit has created it) and kept open until the database is closed.
 */
export function sqliteWalSync(sqlite: SQLite.Database): (() => Promise<void>) | null {
  if (sqlite.memory || sqlite.pragma('journal_mode', { simple: true }) !== 'wal') return null;
  const walPath = `${sqlite.name}-wal`;
  return () =>
    new Promise<void>((resolve, reject) => {
      let fd = walFds.get(sqlite);
      if (fd === undefined) {
        try {
          fd = fs.openSync(walPath, 'r+');
        } catch (err) {
          reject(err);
          return;
        }
        walFds.set(sqlite, fd);
      }
      fs.fdatasync(fd, (err) => (err ? reject(err) : resolve()));
    });
}

function closeWalFd(sqlite: SQLite.Database): void {
  const fd = walFds.get(sqlite);
  if (fd === undefined) return;
  walFds.delete(sqlite);
  fs.closeSync(fd);
}

/** The better-sqlite3 connection behind a Kysely instance, or undefined on PostgreSQL. */
export function rawSqliteOf(db: Kysely<any>): SQLite.Database | undefined {
  return sqliteHandles.get(db);
}

const postgresPools = new WeakMap<Kysely<any>, pg.Pool>();

/**
 * The pg pool behind a Kysely instance, or undefined on SQLite: for what Kysely cannot do, a COPY
 * (export/copy.ts). A client taken from it must be released like any pooled one.
 */
export function postgresPoolOf(db: Kysely<any>): pg.Pool | undefined {
  return postgresPools.get(db);
}

/** True when `db` (or a transaction of it) runs on PostgreSQL, for the few queries that differ per dialect. */
export function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

export interface OpenOptions {
  /** Where to report errors of idle pooled PostgreSQL connections (a restart, a dropped link). */
  onIdleError?: (err: Error) => void;
  /**
   * SQLite file databases (the server): run the WAL checkpoints in a thread of their own instead
   * of on commit (sqlite-checkpointer.ts), warning here if that thread is lost.
   */
  backgroundCheckpoints?: CheckpointLog;
}

const checkpointers = new WeakMap<Kysely<any>, SqliteCheckpointer>();

/** The background checkpointer of a SQLite database opened with `backgroundCheckpoints` (tests). */
export function sqliteCheckpointerOf(db: Kysely<any>): SqliteCheckpointer | undefined {
  return checkpointers.get(db);
}

export function openDatabase(config: DatabaseConfig, options: OpenOptions = {}): DatabaseHandle {
  if (config.dialect === 'sqlite') {
    const sqlite = openSqlite(config.filename);
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
    sqliteHandles.set(db, sqlite);
    const checkpointer =
      options.backgroundCheckpoints && !sqlite.memory
        ? startSqliteCheckpointer(sqlite, options.backgroundCheckpoints, (work) => db.connection().execute(work))
        : null;
    if (checkpointer) checkpointers.set(db, checkpointer);
    return {
      db,
      dialect: 'sqlite',
      close: async () => {
        await checkpointer?.close();
        await db.destroy();
        closeWalFd(sqlite);
      },
    };
  }
  const pool = new (loadPg().Pool)({
    connectionString: config.connectionString,
    max: 10,
  });
  // Without a listener, an idle connection that the server drops would crash the process.
  pool.on('error', (err) => options.onIdleError?.(err));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  postgresPools.set(db, pool);
  return { db, dialect: 'postgres', close: () => db.destroy() };
}

/** Turns a driver timestamp (Date from pg, ISO text from SQLite) into an ISO-8601 UTC string. */
export function toIsoTimestamp(value: Date | string): string {
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

/** A JSON column (stored as text on both dialects) read as an object; anything else, or bad JSON, gives `{}`. */
export function parseJsonObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** SQLite result codes that mean the database cannot take writes now, not that a statement is wrong. */
const SQLITE_UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|READONLY)/;
/** PostgreSQL SQLSTATE classes/codes of the same kind: connection exceptions, insufficient resources, shutting down, lock timeout. */
const POSTGRES_UNAVAILABLE = /^(08|53|57P0[1-4]|55P03|58)/;
/** Node's codes: the network (PostgreSQL) or the disk (the SQLite WAL sync) failing. */
const SYSTEM_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EIO', 'ENOSPC', 'EROFS', 'EDQUOT']);

/**
 * True when `err` says the database is unreachable, overloaded, locked too long or out of space: an
 * outage to answer with 503 (try again later), not a bug to answer with 500.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (SQLITE_UNAVAILABLE.test(code) || SYSTEM_CODES.has(code))) return true;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && POSTGRES_UNAVAILABLE.test(code)) return true;
  if (typeof message !== 'string') return false;
  // pg and better-sqlite3 say these without a code.
  return /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Cannot use a pool after calling end|The database connection is not open|driver has already been destroyed)|is not currently accepting connections/i.test(
    message,
  );
}

/** Unique-constraint violations look different per driver; callers only need to know it was one. */
export function isUniqueViolation(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as { code?: unknown }).code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** How long scrubDeletedRows keeps trying while readers hold the WAL, and how often. */
const SCRUB_ATTEMPTS = 20;
const SCRUB_RETRY_MS = 250;

/**
 * Takes deleted rows off the disk after an erasure or a bulk delete, once the delete has committed.
 * SQLite: secure_delete has already zeroed them in the database's pages, but the WAL still holds
 * earlier copies of those pages; a TRUNCATE checkpoint copies the WAL into the database and empties
 * the file. Readers (an export, the checkpoint thread) can hold it up: each try waits for nobody
 * (busy_timeout 0, so the event loop never blocks), and it is tried again every 250 ms, up to 5 s.
 * Resolves to true once the WAL is empty (or there is none: an in-memory database).
 * PostgreSQL: nothing here can do it (deleted tuples stay in the table's pages until VACUUM, in the
 * WAL segments until they are recycled, and in base backups and archived WAL); resolves to false.
 */
export async function scrubDeletedRows(db: Kysely<any>): Promise<boolean> {
  const sqlite = rawSqliteOf(db);
  if (!sqlite) return false;
  if (sqlite.memory) return true;
  // One try, with Kysely's connection held so that no transaction of this handle is open meanwhile.
  const tryOnce = () =>
    db.connection().execute(async () => {
      if (sqlite.inTransaction) return false;
      const previousTimeout = sqlite.pragma('busy_timeout', { simple: true }) as number;
      sqlite.pragma('busy_timeout = 0');
      try {
        const [result] = sqlite.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
        return result?.busy === 0;
      } catch (err) {
        if ((err as { code?: unknown }).code === 'SQLITE_BUSY') return false;
        throw err;
      } finally {
        sqlite.pragma(`busy_timeout = ${previousTimeout}`);
      }
    });
  for (let attempt = 1; ; attempt++) {
    if (await tryOnce()) return true;
    if (attempt >= SCRUB_ATTEMPTS) return false;
    await new Promise((resolve) => setTimeout(resolve, SCRUB_RETRY_MS));
  }
}

/** scrubDeletedRows after the answer, not before it: a failure or a WAL still held is logged, never thrown. */
export function scrubDeletedRowsSoon(db: Kysely<any>, log: { warn: (obj: object, msg: string) => void }): void {
  scrubDeletedRows(db).then(
    (scrubbed) => {
      if (!scrubbed && rawSqliteOf(db)) log.warn({}, 'database: the WAL still holds deleted rows (readers held it); the next checkpoint takes them off');
    },
    (err: unknown) => log.warn({ err }, 'database: could not take deleted rows off the disk'),
  );
}
