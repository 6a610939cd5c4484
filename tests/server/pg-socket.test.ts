import net from 'node:net';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, postgresPoolOf, type DatabaseHandle } from '../../src/server/db/database.js';
import { postgresSocket, ReusedBufferSocket } from '../../src/server/db/pg-socket.js';
import { describeWhen } from '../support/databases.js';

/**
 * The pool's PostgreSQL sockets read into one buffer each, reused for every read (db/pg-socket.ts):
 * whatever reads them must still get every byte, in order, as from any socket, and a reader that
 * takes the reads (the COPY export) gets them in place and hands back what is not its own.
 */

/** 3 MB of bytes that differ from read to read, so a reused buffer seen twice would show. */
const PAYLOAD = Buffer.from(Array.from({ length: 3 * 1024 * 1024 }, (_, i) => (i * 7 + (i >> 12)) & 0xff));

/** A server that sends PAYLOAD in writes of uneven sizes, then closes; and a connected ReusedBufferSocket. */
async function connected(): Promise<{ socket: ReusedBufferSocket; close: () => void }> {
  const server = net.createServer((peer) => {
    let at = 0;
    let n = 0;
    const write = () => {
      while (at < PAYLOAD.length) {
        const size = [1, 5000, 70_000, 300, 200_000][n++ % 5]!;
        const ok = peer.write(PAYLOAD.subarray(at, at + size));
        at += size;
        if (!ok) return void peer.once('drain', write);
      }
      peer.end();
    };
    write();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const socket = new ReusedBufferSocket();
  socket.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
  return { socket, close: () => server.close() };
}

describe('a socket that reuses its read buffer', () => {
  it("hands every byte to 'data' listeners in chunks of their own", async () => {
    const { socket, close } = await connected();
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    await once(socket, 'end');
    close();
    // Kept until the end and still intact: none is a view of the reused buffer.
    expect(chunks.length).toBeGreaterThan(1);
    expect(Buffer.concat(chunks).equals(PAYLOAD)).toBe(true);
  });

  it('is read as a paused stream, with read(), as pg-copy-streams reads a COPY', async () => {
    const { socket, close } = await connected();
    // As pg-copy-streams does mid-connection: the 'data' listener off, the socket paused, then read().
    const chunks: Buffer[] = [];
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      socket.removeListener('data', onData);
      socket.pause();
      socket.on('readable', () => {
        let next: Buffer | null;
        while ((next = socket.read() as Buffer | null) !== null) chunks.push(next);
      });
    };
    socket.on('data', onData);
    await once(socket, 'end');
    close();
    expect(Buffer.concat(chunks).equals(PAYLOAD)).toBe(true);
  });

  it('gives a reader its reads in place, pauses while it asks, and hands the rest back to the stream', async () => {
    const { socket, close } = await connected();
    const half = PAYLOAD.length / 2;
    // Every byte in the order it came, from the stream or to the reader.
    const all: Buffer[] = [];
    let seen = 0;
    let streamed = 0;
    socket.on('data', (chunk: Buffer) => {
      all.push(chunk);
      seen += chunk.length;
      streamed += chunk.length;
    });
    await once(socket, 'data');
    const streamedBefore = streamed;
    let taken = 0;
    let pauses = 0;
    let calls = 0;
    /** Reads that reached the reader while it had asked for none. */
    let unasked = 0;
    let paused = false;
    socket.takeReads((bytes) => {
      expect(socket.diverted).toBe(true);
      if (paused) unasked++;
      calls++;
      const mine = Math.min(bytes.length, half - seen);
      all.push(Buffer.from(bytes.subarray(0, mine)));
      seen += mine;
      taken += mine;
      if (seen === half) {
        // The reader's part ends in this read: what follows it goes back to the stream.
        socket.releaseReads(bytes.subarray(mine));
        return false;
      }
      if (calls % 3 === 0) {
        // Not now: reading stops until the reader resumes it.
        pauses++;
        paused = true;
        void sleep(5).then(() => {
          paused = false;
          socket.resume();
        });
        return false;
      }
      return true;
    });
    expect(() => socket.takeReads(() => true)).toThrow(/already/);
    await once(socket, 'end');
    close();
    expect(socket.diverted).toBe(false);
    expect(pauses).toBeGreaterThan(0);
    expect(unasked).toBe(0);
    expect(taken).toBe(half - streamedBefore);
    expect(streamed).toBe(PAYLOAD.length - taken);
    expect(Buffer.concat(all).equals(PAYLOAD)).toBe(true);
  });

  it('is used for connections without TLS only (TLS reads the socket beneath it itself)', () => {
    expect(postgresSocket({})).toBeInstanceOf(ReusedBufferSocket);
    expect(postgresSocket({ ssl: false })).toBeInstanceOf(ReusedBufferSocket);
    const tls = postgresSocket({ ssl: { rejectUnauthorized: false } });
    expect(tls).toBeInstanceOf(net.Socket);
    expect(tls).not.toBeInstanceOf(ReusedBufferSocket);
  });
});

describeWhen(Boolean(process.env.TEST_DATABASE_URL))('the pool on PostgreSQL', () => {
  let handle: DatabaseHandle;
  beforeAll(() => {
    handle = openDatabase({ dialect: 'postgres', connectionString: process.env.TEST_DATABASE_URL! });
  });
  afterAll(async () => {
    await handle?.close();
  });

  it('reads results through sockets that reuse their buffer, large ones included', async () => {
    const client = await postgresPoolOf(handle.db)!.connect();
    try {
      expect((client as unknown as { connection: { stream: unknown } }).connection.stream).toBeInstanceOf(ReusedBufferSocket);
      const { rows } = await client.query<{ n: number; text: string }>(
        `SELECT n, repeat(md5(n::text), 2000) AS text FROM generate_series(1, 200) AS n ORDER BY n`,
      );
      expect(rows).toHaveLength(200);
      const { rows: expected } = await client.query<{ n: number; digest: string }>(`SELECT n, md5(n::text) AS digest FROM generate_series(1, 200) AS n ORDER BY n`);
      rows.forEach((row, i) => {
        expect(row.n).toBe(i + 1);
        expect(row.text).toBe(expected[i]!.digest.repeat(2000));
      });
    } finally {
      client.release();
    }
  });
});
