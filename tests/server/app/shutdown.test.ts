import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { startInstance, stopInstance, waitHealthy, type Instance } from '../../support/server-process.js';

/**
 * SIGTERM while a signup is in flight: the request still completes (201, stored), the process exits
 * 0 after closing the database (SQLite checkpoints and removes its WAL file on a clean close).
 */
describe('graceful shutdown', () => {
  let instance: Instance | undefined;
  let geoService: http.Server | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    if (instance) await stopInstance(instance);
    await new Promise<void>((resolve) => (geoService ? geoService.close(() => resolve()) : resolve()));
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
    instance = geoService = dir = undefined;
  });

  it('finishes the in-flight signup, closes the database and exits 0', async () => {
    // A geolocation service that holds each lookup until the test releases it.
    let lookupArrived!: () => void;
    const arrived = new Promise<void>((resolve) => (lookupArrived = resolve));
    let releaseLookup!: () => void;
    const released = new Promise<void>((resolve) => (releaseLookup = resolve));
    geoService = http.createServer((_req, res) => {
      lookupArrived();
      void released.then(() => res.end(JSON.stringify({ ip: '8.8.8.8', country_name: 'United States', city: 'Mountain View', region: 'California' })));
    });
    await new Promise<void>((resolve) => geoService!.listen(0, '127.0.0.1', resolve));
    const geoPort = (geoService.address() as { port: number }).port;

    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'waitlist-shutdown-'));
    const dbFile = path.join(dir, 'db.sqlite');
    instance = startInstance('server', {
      DATABASE_URL: `file:${dbFile}`,
      LOG_LEVEL: 'info',
      TRUST_PROXY: '1',
      GEOLOCATION_URL: `http://127.0.0.1:${geoPort}/json/{ip}`,
      GEOLOCATION_TIMEOUT_MS: '20000',
    });
    await waitHealthy(instance);

    const signup = fetch(`${instance.base}/api/waitlist`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '8.8.8.8' },
      body: JSON.stringify({ email: 'in-flight@example.com' }),
    });
    await arrived; // the signup is now waiting on its lookup, inside the server
    const exited = new Promise<number | null>((resolve) => instance!.child.once('exit', (code) => resolve(code)));
    instance.child.kill('SIGTERM');
    // The lookup answers only once the server has started closing (it logs so on SIGTERM), however long that takes.
    while (!instance.output().includes('shutting down: finishing in-flight requests')) {
      expect(instance.child.exitCode, instance.output()).toBeNull();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    releaseLookup();

    const response = await signup;
    expect(response.status).toBe(201);
    const exitCode = await exited;
    expect(exitCode, instance.output()).toBe(0);
    expect(instance.output()).toContain('shutdown complete');

    expect(fs.existsSync(`${dbFile}-wal`)).toBe(false);
    const db = new SQLite(dbFile, { readonly: true });
    try {
      expect(db.prepare('select email, country, city from waitlist').all()).toEqual([
        { email: 'in-flight@example.com', country: 'United States', city: 'Mountain View' },
      ]);
    } finally {
      db.close();
    }
  });
});
