import { pipeline, type Readable, type Transform, type TransformCallback } from 'node:stream';
import negotiate from '@fastify/accept-negotiator';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type * as zstdNapi from 'zstd-napi';
import { optionalModule } from '../runtime/optional-module.js';
import { giveBack } from './returned-buffers.js';

/**
 * Zstandard for a large generated download (an export of up to a million rows, ~90 MB of CSV), when
 * the client accepts it (Chromium and Firefox do; Safari does not and gets brotli from
 * @fastify/compress). Level 1 writes a smaller file than brotli at quality 1 (18.8 MB instead of
 * 20.6 for the admin bench's million rows) for about half its CPU, and Chromium reads it in less than
 * half the time: on a machine whose cores the server, the database and the browser share, that is
 * the export's time (docs/decisions/015).
 *
 * Node 20's zlib has no zstd (it arrives in 22.15), so the compressor is the zstd-napi addon (zstd's
 * own C library), loaded with the first such download.
 */
const ZSTD_LEVEL = 1;

/**
 * zstd compresses each 2 MB block in a thread of its own while the event loop reads the next rows;
 * the event loop waits only when a block is ready before the previous one is done, and at the end.
 * The thread and its buffers (about 14 MB more than a single-threaded context) are released with
 * the stream, at a later garbage collection.
 */
const ZSTD_WORKERS = 1;

/** The encodings a bulk download may use, in our order of preference (the client's q-values first). */
type BulkEncoding = 'zstd' | 'br' | 'gzip';
const BULK_ENCODINGS: BulkEncoding[] = ['zstd', 'br', 'gzip'];

const loadZstdNapi = optionalModule<typeof zstdNapi>('zstd-napi');

/** Makes a new zstd compressor stream. */
export type ZstdCompressorFactory = () => Transform;

/** The zstd compressor factory from `load`'s addon, or null (with the reason logged) when it cannot load. */
export function loadZstdCompressor(log: FastifyBaseLogger, load: () => typeof zstdNapi = loadZstdNapi): ZstdCompressorFactory | null {
  try {
    const { CompressStream } = load();
    /** zstd copies a chunk's bytes before its transform calls back (streaming input is reusable once consumed): the chunk goes back to its lender. */
    class ReturningCompressStream extends CompressStream {
      override _transform(chunk: Buffer, encoding: BufferEncoding, done: TransformCallback): void {
        super._transform(chunk, encoding, (err?: Error | null) => {
          giveBack(chunk);
          done(err);
        });
      }
    }
    return () => new ReturningCompressStream({ compressionLevel: ZSTD_LEVEL, nbWorkers: ZSTD_WORKERS });
  } catch (err) {
    log.warn({ err }, 'zstd is unavailable (the zstd-napi addon did not load); bulk downloads use brotli or gzip');
    return null;
  }
}

let resolved: ZstdCompressorFactory | null | undefined;

/**
 * The zstd compressor factory, found with the first download that asks for zstd. A missing or
 * unloadable addon (a platform it did not build on) is not an error: downloads then use brotli or
 * gzip as before.
 */
function zstdCompressor(log: FastifyBaseLogger): ZstdCompressorFactory | null {
  if (resolved === undefined) resolved = loadZstdCompressor(log);
  return resolved;
}

/**
 * The encoding a bulk download is sent in, read as @fastify/compress reads Accept-Encoding (case
 * ignored, `*` and `x-gzip` meaning gzip), so the two never disagree: zstd only when the client
 * names it and prefers it.
 */
function bulkEncoding(request: FastifyRequest): BulkEncoding | null {
  const accepted = request.headers['accept-encoding'];
  if (typeof accepted !== 'string') return null;
  return negotiate(accepted.toLowerCase().replace(/\*|x-gzip/g, 'gzip'), BULK_ENCODINGS);
}

/** Headers that describe the download rather than an error answer sent in its place. */
const DOWNLOAD_HEADERS = ['content-encoding', 'content-disposition'] as const;

/**
 * Sends `body` as a bulk download: zstd-compressed here when the request's Accept-Encoding prefers
 * it among the encodings we offer, otherwise as it is, for the route's @fastify/compress settings
 * (brotli or gzip at their fastest levels) to compress. Errors and early closes travel through the
 * pipeline both ways: a failing source cuts the download off, a closed response stops the source.
 * zstd sends nothing until it has compressed a first block (2 MB of input with one worker) or the
 * end: a source failing before that gets Fastify's error answer, which must not claim to be zstd.
 */
export function sendBulkDownload(
  request: FastifyRequest,
  reply: FastifyReply,
  body: Readable,
  compressors: (log: FastifyBaseLogger) => ZstdCompressorFactory | null = zstdCompressor,
): FastifyReply {
  const factory = bulkEncoding(request) === 'zstd' ? compressors(request.log) : null;
  if (factory === null) return reply.send(body);

  const compressed = factory();
  const vary = reply.getHeader('vary');
  const varies = vary === undefined ? [] : (Array.isArray(vary) ? vary : [String(vary)]).flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
  if (!varies.some((v) => v.toLowerCase() === 'accept-encoding' || v === '*')) varies.push('accept-encoding');
  reply.header('vary', varies.join(', '));
  reply.header('content-encoding', 'zstd');
  // Registered before Fastify's own listener, so the error answer goes out without these headers.
  compressed.once('error', () => {
    if (reply.raw.headersSent) return;
    for (const name of DOWNLOAD_HEADERS) {
      reply.removeHeader(name);
      reply.raw.removeHeader(name);
    }
  });
  // Fastify reports the sent stream's errors and destroys it when the response closes early; the
  // pipeline carries either to the other end.
  pipeline(body, compressed, () => {});
  return reply.send(compressed);
}
