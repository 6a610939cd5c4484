import compress from '@fastify/compress';
import type { FastifyInstance } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { constants as zlib } from 'node:zlib';

/** The security headers' settings (helmet's options): the same on every response. */
export const HELMET_OPTIONS = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'"],
      // React writes style attributes during SSR and Radix/sonner position elements with them.
      styleSrc: ["'self'", "'unsafe-inline'"],
      imgSrc: ["'self'", 'data:'],
      fontSrc: ["'self'"],
      connectSrc: ["'self'"],
      objectSrc: ["'none'"],
      baseUri: ["'self'"],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
    },
  },
  // HSTS only makes sense on HTTPS; it is added below when the request came over TLS.
  strictTransportSecurity: false,
  referrerPolicy: { policy: 'strict-origin-when-cross-origin' },
  xFrameOptions: { action: 'deny' },
  crossOriginEmbedderPolicy: false,
} satisfies HelmetOptions;

export const HSTS_HEADER = ['strict-transport-security', 'max-age=31536000; includeSubDomains'] as const;

export interface FixedHeaders {
  /** [name, value] in the order helmet sets them. */
  set: Array<[string, string]>;
  /** Headers helmet removes (X-Powered-By). */
  remove: string[];
}

/**
 * What helmet(options) does to a response, recorded once: with static directives (no nonces, no
 * functions) its headers are the same for every request, so there is no need to run its
 * middleware (which @fastify/helmet did, with two hooks, for every request).
 */
export function helmetHeaders(options: HelmetOptions = HELMET_OPTIONS): FixedHeaders {
  const fixed: FixedHeaders = { set: [], remove: [] };
  const recorder = {
    setHeader(name: string, value: string | number | readonly string[]) {
      fixed.set.push([name, Array.isArray(value) ? value.join(', ') : String(value)]);
    },
    removeHeader(name: string) {
      fixed.remove.push(name);
    },
  };
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, (err?: unknown) => {
    if (err) throw err;
  });
  return fixed;
}

/** Security headers and compression for every response. */
export async function registerSecurity(app: FastifyInstance): Promise<void> {
  const { set, remove } = helmetHeaders();
  const [hstsName, hstsValue] = HSTS_HEADER;
  // One synchronous hook, on the raw response as helmet did (same names, values and order).
  app.addHook('onRequest', (request, reply, done) => {
    const raw = reply.raw;
    for (const name of remove) raw.removeHeader(name);
    for (const [name, value] of set) raw.setHeader(name, value);
    if (request.protocol === 'https') raw.setHeader(hstsName, hstsValue);
    done();
  });

  await app.register(compress, {
    global: true,
    threshold: 1024,
    encodings: ['br', 'gzip'],
    brotliOptions: { params: { [zlib.BROTLI_PARAM_QUALITY]: 5 } },
  });
}
