import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';

/**
 * End-to-end servers: the production build on a fresh database of its own (scripts/e2e-server.mjs),
 * on a port the kernel chooses and the server reports (report-port.mjs). One per Playwright worker
 * (tests/e2e/global-setup.ts), and the extra ones some specs start with their own environment.
 */

export interface E2eServer {
  /** Where the browser and the tests reach it: the server itself, or with `publicUrl` a forwarder. */
  baseUrl: string;
  /** The database file and key file (the admin CLI creates admins there). */
  dataDir: string;
  stop(): Promise<void>;
}

/** The environment the e2e server (scripts/e2e-server.mjs) gives the app for a data directory. */
export function e2eServerEnv(dataDir: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: `file:${path.join(dataDir, 'e2e.db')}`,
    AUTH_SECRET_KEY_FILE: path.join(dataDir, 'auth-secret.key'),
    LOG_LEVEL: 'warn',
  };
}

/** A TCP forwarder listening on a port of its own from the start: its URL can be given to a server before that server listens. */
async function startForwarder(): Promise<{ url: string; forwardTo(port: number): void; close(): Promise<void> }> {
  let target = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => (socket === client ? upstream : client).destroy());
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    forwardTo: (serverPort) => (target = serverPort),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * Starts an e2e server with extra environment (ADMIN_MFA=required, E2E_ADMIN_EMAIL and
 * E2E_ADMIN_PASSWORD for its first admin…) and waits until it answers /healthz. With `publicUrl`, the
 * server is told its own origin (PUBLIC_URL, for the links in its e-mails) and reached through it.
 */
export async function startE2eServer(env: Record<string, string>, options: { publicUrl?: boolean } = {}): Promise<E2eServer> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'waitlist-e2e-'));
  const forwarder = options.publicUrl ? await startForwarder() : null;
  const child: ChildProcess = spawn(process.execPath, ['scripts/e2e-server.mjs'], {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      E2E_DATA_DIR: dataDir,
      // The e2e servers never depend on the network's DNS; the MX check's tests run a DNS server of their own.
      SIGNUP_CHECK_MX: 'off',
      ...(forwarder ? { PUBLIC_URL: forwarder.url } : {}),
      ...env,
      PORT: '0',
      REPORT_PORT_FD: '3',
    },
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    await forwarder?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const port = await new Promise<number>((resolve, reject) => {
      let text = '';
      const timer = setTimeout(() => reject(new Error(`the e2e server did not listen within 60 s:\n${stderr}`)), 60_000);
      (child.stdio[3] as Readable).on('data', (chunk: Buffer) => {
        text += chunk.toString();
        if (!text.includes('\n')) return;
        clearTimeout(timer);
        resolve(Number(text.trim()));
      });
      void exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`the e2e server exited (${child.exitCode ?? child.signalCode}):\n${stderr}`));
      });
    });
    forwarder?.forwardTo(port);
    const baseUrl = forwarder?.url ?? `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 30_000;
    while (!(await fetch(`${baseUrl}/healthz`).then((response) => response.ok, () => false))) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the e2e server on ${baseUrl} is not healthy:\n${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return { baseUrl, dataDir, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
