/** Starting and stopping the processes the signup benchmark loads, and its scratch databases. */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';

export interface ServerProcess {
  name: string;
  child: ChildProcess;
  pid: number;
  port: number;
  /** Resolves with the exit code (or the signal's name) when the process has ended. */
  exited: Promise<number | string>;
  /** What the process wrote to standard error so far (shown when it fails). */
  stderr(): string;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function waitForHealth(server: ServerProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    let ended = false;
    void server.exited.then((code) => {
      ended = true;
      reject(new Error(`${server.name} exited (${code}) before it answered:\n${server.stderr()}`));
    });
    const poll = () => {
      if (ended) return;
      http
        .get({ host: '127.0.0.1', port: server.port, path: '/healthz' }, (res) => {
          res.resume();
          if (res.statusCode === 200) resolve();
          else setTimeout(poll, 100);
        })
        .on('error', () => {
          if (Date.now() > deadline) reject(new Error(`${server.name} did not answer /healthz within ${timeoutMs / 1000} s:\n${server.stderr()}`));
          else setTimeout(poll, 100);
        });
    };
    poll();
  });
}

export interface StartOptions {
  name: string;
  nodeArgs: string[];
  env: NodeJS.ProcessEnv;
  port: number;
  cwd: string;
  /** Where the process's standard output goes (the product's request log): a file, or nowhere. */
  stdoutFile?: string;
}

export async function startServer(options: StartOptions): Promise<ServerProcess> {
  const stdout = options.stdoutFile ? fs.openSync(options.stdoutFile, 'a') : 'ignore';
  const child = spawn(process.execPath, options.nodeArgs, {
    cwd: options.cwd,
    env: { ...options.env, PORT: String(options.port) },
    stdio: ['ignore', stdout, 'pipe'],
  });
  if (typeof stdout === 'number') fs.closeSync(stdout);
  let stderr = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (text: string) => {
    stderr = (stderr + text).slice(-20_000);
  });
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  const server: ServerProcess = { name: options.name, child, pid: child.pid!, port: options.port, exited, stderr: () => stderr };
  try {
    await waitForHealth(server);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return server;
}

/** Stops a server (SIGTERM lets it finish and write its CPU profile; SIGKILL is a crash) and waits for it. */
export async function stopServer(server: ServerProcess, signal: 'SIGTERM' | 'SIGKILL'): Promise<number | string> {
  if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill(signal);
  const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 30_000).unref());
  const result = await Promise.race([server.exited, timeout]);
  if (result === 'timeout') {
    server.child.kill('SIGKILL');
    return server.exited;
  }
  return result;
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** True when a PostgreSQL server answers at `url` within a few seconds. */
export async function postgresAnswers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function adminQuery(adminUrl: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

export interface ScratchDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** A new, empty database on the server of `adminUrl` (the product migrates it at start), dropped afterwards. */
export async function createScratchPostgres(adminUrl: string): Promise<ScratchDatabase> {
  const name = `waitlist_bench_${randomBytes(5).toString('hex')}`;
  await adminQuery(adminUrl, `CREATE DATABASE ${quoteIdent(name)}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), name, drop: () => adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`) };
}

/** A fresh SQLite file in its own temporary directory (under `parent`). */
export function scratchSqlite(parent: string): { url: string; file: string } {
  const dir = fs.mkdtempSync(path.join(parent, 'sqlite-'));
  const file = path.join(dir, 'waitlist.db');
  return { url: `file:${file}`, file };
}

/** Every stored entry whose address starts with `prefix` (the benchmark's own rows): its address and status. */
export async function storedSignups(databaseUrl: string, prefix: string): Promise<Array<{ email: string; status: string }>> {
  const query = 'SELECT email, status FROM waitlist WHERE email LIKE ';
  if (databaseUrl.startsWith('postgres')) {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      return (await client.query<{ email: string; status: string }>(`${query}$1`, [`${prefix}-%`])).rows;
    } finally {
      await client.end();
    }
  }
  const { default: SQLite } = await import('better-sqlite3');
  const db = new SQLite(databaseUrl.replace(/^(file|sqlite):/, ''), { readonly: true, fileMustExist: true });
  try {
    return db.prepare(`${query}?`).all(`${prefix}-%`) as Array<{ email: string; status: string }>;
  } finally {
    db.close();
  }
}
