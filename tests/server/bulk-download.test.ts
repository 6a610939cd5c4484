import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { brotliDecompressSync } from 'node:zlib';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { decompress as zstdDecompress } from 'zstd-napi';
import { loadZstdCompressor, sendBulkDownload, type ZstdCompressorFactory } from '../../src/server/http/bulk-download.js';
import { lend } from '../../src/server/http/returned-buffers.js';
import { BULK_DOWNLOAD_COMPRESSION, registerSecurity } from '../../src/server/http/security.js';

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

/** An app with the server's compression whose GET /download sends `body()` as a bulk download. */
async function serve(body: () => Readable, compressors?: () => ZstdCompressorFactory | null) {
  app = Fastify({ logger: false });
  await registerSecurity(app);
  app.get('/download', { compress: BULK_DOWNLOAD_COMPRESSION }, (request, reply) => {
    reply.type('text/csv; charset=utf-8').header('content-disposition', 'attachment; filename="x.csv"');
    return sendBulkDownload(request, reply, body(), compressors);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as AddressInfo).port;
}

describe('bulk downloads', () => {
  it('finds no zstd compressor when the addon cannot be loaded, and logs why', () => {
    const warnings: unknown[][] = [];
    const log = { warn: (...args: unknown[]) => warnings.push(args) } as unknown as Parameters<typeof loadZstdCompressor>[0];
    const factory = loadZstdCompressor(log, () => {
      throw new Error('Cannot find module zstd-napi');
    });
    expect(factory).toBeNull();
    expect(warnings).toHaveLength(1);
    expect(String(warnings[0]![1])).toMatch(/zstd is unavailable/);
  });

  it('sends brotli to a client that prefers zstd when no compressor is available', async () => {
    const state = { sent: 0, finished: false, stopped: false };
    await serve(() => lines(20, state), () => null);
    const res = await app!.inject({ method: 'GET', url: '/download', headers: { 'accept-encoding': 'gzip, deflate, br, zstd' } });
    expect(res.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(res.rawPayload).toString('utf8').split('\n')).toHaveLength(20 * 50 + 1);
    expect(state.finished).toBe(true);
  });

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

  it('gives lent chunks back once zstd has read them; writing into them again never changes the file', async () => {
    const spare: Buffer[] = [];
    let allocated = 0;
    let returned = 0;
    const expected: Buffer[] = [];
    async function* lending(): AsyncGenerator<Buffer> {
      for (let i = 0; i < 300; i++) {
        const chunk = spare.pop() ?? (allocated++, Buffer.allocUnsafe(64 * 1024));
        chunk.fill(`chunk ${i};`);
        expected.push(Buffer.from(chunk));
        yield lend(chunk, () => {
          returned++;
          spare.push(chunk);
        });
      }
    }
    const port = await serve(() => Readable.from(lending(), { objectMode: false }));
    // A slow reader, so chunks wait in the streams' queues while more are made.
    const body = await new Promise<Buffer>((resolve, reject) => {
      http
        .get({ port, host: '127.0.0.1', path: '/download', headers: { 'accept-encoding': 'zstd' } }, (res) => {
          const parts: Buffer[] = [];
          res.on('data', (part: Buffer) => {
            parts.push(part);
            res.pause();
            setTimeout(() => res.resume(), 1);
          });
          res.on('end', () => resolve(Buffer.concat(parts)));
          res.on('error', reject);
        })
        .on('error', reject);
    });
    expect(zstdDecompress(body).equals(Buffer.concat(expected))).toBe(true);
    expect(returned).toBe(300);
    expect(allocated).toBeLessThan(300);
    // brotli (another consumer) does not give chunks back: the source then makes new ones.
    returned = 0;
    expected.length = 0;
    const res = await app!.inject({ method: 'GET', url: '/download', headers: { 'accept-encoding': 'br' } });
    expect(brotliDecompressSync(res.rawPayload).equals(Buffer.concat(expected))).toBe(true);
    expect(returned).toBe(0);
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
    expect(zstdDecompress(body).toString('utf8').split('\n')).toHaveLength(40 * 50 + 1);
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
