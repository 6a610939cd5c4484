import http from 'node:http';
import helmetPlugin from '@fastify/helmet';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { HELMET_OPTIONS, HSTS_HEADER } from '../../../src/server/http/security.js';
import { SIGNUP_PATH } from '../../../src/shared/waitlist/signup-contract.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

/**
 * The security headers are computed once at start (http/security.ts) instead of by @fastify/helmet
 * on every request: every response must carry exactly the headers the plugin set, byte for byte
 * (names as written, values, order), and HSTS on HTTPS as before.
 */

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** The way the headers were set before (the previous registerSecurity): the plugin, and HSTS in onSend. */
async function referenceApp(): Promise<FastifyInstance> {
  const app = Fastify({ trustProxy: true });
  await app.register(helmetPlugin, HELMET_OPTIONS);
  app.addHook('onSend', async (request, reply) => {
    if (request.protocol === 'https') reply.header(HSTS_HEADER[0], HSTS_HEADER[1]);
  });
  app.all('/*', async () => 'ok');
  return app;
}

async function listen(app: FastifyInstance): Promise<number> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  return (app.server.address() as { port: number }).port;
}

interface Raw {
  status: number;
  /** [name as sent, value] in the order sent. */
  headers: Array<[string, string]>;
}

function request(port: number, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      res.resume();
      res.on('end', () => {
        const pairs: Array<[string, string]> = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) pairs.push([res.rawHeaders[i]!, res.rawHeaders[i + 1]!]);
        resolve({ status: res.statusCode ?? 0, headers: pairs });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Headers every response has for other reasons (framing, caching, the body, the rate limit). */
const NOT_SECURITY = /^(date|connection|keep-alive|content-type|content-length|content-encoding|cache-control|etag|last-modified|vary|accept-ranges|location|x-ratelimit-.*|retry-after)$/i;
const securityHeaders = (raw: Raw) => raw.headers.filter(([name]) => !NOT_SECURITY.test(name));

describe('security headers, computed once', () => {
  it('are byte for byte what @fastify/helmet sent, on pages, the signup API, the admin page and errors, over HTTP and HTTPS', async () => {
    const reference = await referenceApp();
    cleanups.push(() => reference.close());
    const referencePort = await listen(reference);
    const t: TestApp = await createTestApp({ TRUST_PROXY: '1', SIGNUP_RATE_LIMIT_MAX: '1000' });
    cleanups.push(() => t.close());
    const port = await listen(t.app);

    const https = { 'x-forwarded-proto': 'https' };
    const json = { 'content-type': 'application/json' };
    const cases: Array<[string, string, Record<string, string>, string?]> = [
      ['GET', '/', {}],
      ['GET', '/', https],
      ['GET', '/admin', {}],
      ['GET', '/admin', https],
      ['POST', SIGNUP_PATH, json, JSON.stringify({ email: 'headers@example.com' })],
      ['POST', SIGNUP_PATH, { ...json, ...https }, JSON.stringify({ email: 'headers-tls@example.com' })],
      ['POST', SIGNUP_PATH, json, '{"email":'], // a 400
      ['GET', '/api/nothing-here', {}], // a 404
    ];
    for (const [method, path, headers, body] of cases) {
      const expected = securityHeaders(await request(referencePort, method, path, headers, body));
      const actual = await request(port, method, path, headers, body);
      expect(securityHeaders(actual), `${method} ${path} ${JSON.stringify(headers)}`).toEqual(expected);
    }

    // What that is, spelled out: the CSP and the rest, HSTS only over HTTPS, no X-Powered-By.
    const plain = securityHeaders(await request(port, 'GET', '/'));
    expect(plain.map(([name]) => name)).toEqual([
      'Content-Security-Policy',
      'Cross-Origin-Opener-Policy',
      'Cross-Origin-Resource-Policy',
      'Origin-Agent-Cluster',
      'Referrer-Policy',
      'X-Content-Type-Options',
      'X-DNS-Prefetch-Control',
      'X-Download-Options',
      'X-Frame-Options',
      'X-Permitted-Cross-Domain-Policies',
      'X-XSS-Protection',
    ]);
    const tls = securityHeaders(await request(port, 'GET', '/', https));
    expect(tls.find(([name]) => name.toLowerCase() === 'strict-transport-security')).toEqual(['strict-transport-security', 'max-age=31536000; includeSubDomains']);
  });
});
