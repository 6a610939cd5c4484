import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { zstdDecompressSync } from 'node:zlib';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { FILE_ROUTE_OPTIONS } from '../../../src/server/export/routes.js';
import { registerSecurity } from '../../../src/server/http/security.js';

/**
 * An export's file as a bulk download (export/routes.ts FILE_ROUTE_OPTIONS): zstd from Node's zlib
 * for the clients that prefer it, an early failure answered without the download's headers, and a
 * client that hangs up stopping the source.
 */

/** A download of `lines` CSV-like lines, telling `state` how far it got and whether it was stopped. */
function lines(count: number, state: { sent: number; finished: boolean; stopped: boolean }): Readable {
  async function* generate() {
    try {
      for (let i = 0; i < count; i++) {
        state.sent = i + 1;
        yield Buffer.from(`${Array.from({ length: 50 }, (_, j) => `row${i}-${j}@example.com,Germany,2026-01-01`).join('\n')}\n`);
      }
      state.finished = true;
    } finally {
      if (!state.finished) state.stopped = true;
    }
  }
  return Readable.from(generate(), { objectMode: false });
}

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** An app with the server's compression whose GET /download sends `body()` as the export's routes send a file. */
async function serve(body: () => Readable) {
  app = Fastify({ logger: false });
  await registerSecurity(app);
  app.get('/download', FILE_ROUTE_OPTIONS, (_request, reply) => {
    reply.type('text/csv; charset=utf-8').header('content-disposition', 'attachment; filename="x.csv"');
    return reply.send(body());
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as AddressInfo).port;
}

describe('bulk downloads', () => {
  it('answers a source that fails before its first byte with an error that is not labelled zstd', async () => {
    async function* failing(): AsyncGenerator<Buffer> {
      yield Buffer.from('Email,Date Joined\n');
      throw new Error('the database went away');
    }
    await serve(() => Readable.from(failing(), { objectMode: false }));
    const res = await app!.inject({ method: 'GET', url: '/download', headers: { 'accept-encoding': 'zstd' } });
    expect(res.statusCode).toBe(500);
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.headers['content-disposition']).toBeUndefined();
    expect(res.json()).toMatchObject({ statusCode: 500 });
  });

  it('sends zstd over HTTP, and a client that hangs up stops the source', async () => {
    const whole = { sent: 0, finished: false, stopped: false };
    const port = await serve(() => lines(40, whole));
    const body = await new Promise<Buffer>((resolve, reject) => {
      http
        .get({ port, host: '127.0.0.1', path: '/download', headers: { 'accept-encoding': 'zstd' } }, (res) => {
          expect(res.headers['content-encoding']).toBe('zstd');
          const parts: Buffer[] = [];
          res.on('data', (part: Buffer) => parts.push(part)).on('end', () => resolve(Buffer.concat(parts))).on('error', reject);
        })
        .on('error', reject);
    });
    expect(zstdDecompressSync(body).toString('utf8').split('\n')).toHaveLength(40 * 50 + 1);
    expect(whole.finished).toBe(true);
    await app!.close();

    // A download far larger than the socket's buffers, abandoned after its first bytes.
    const cut = { sent: 0, finished: false, stopped: false };
    const cutPort = await serve(() => lines(1_000_000, cut));
    await new Promise<void>((resolve, reject) => {
      const req = http.get({ port: cutPort, host: '127.0.0.1', path: '/download', headers: { 'accept-encoding': 'zstd' } }, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
    });
    await expect.poll(() => cut.stopped).toBe(true);
    expect(cut.finished).toBe(false);
    expect(cut.sent).toBeLessThan(1_000_000);
  });
});
