import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../support/test-app.js';

/** A miniature web build in the test app's WEB_ROOT, so page serving is tested without `npm run build`. */
function writeBuild(webRoot: string): void {
  fs.mkdirSync(path.join(webRoot, 'assets'), { recursive: true });
  const page = (title: string) => `<!doctype html><html lang="en"><head><title>${title}</title></head><body><h1>${title}</h1></body></html>`;
  fs.writeFileSync(path.join(webRoot, 'index.html'), page('Landing'));
  fs.writeFileSync(path.join(webRoot, 'thanks.html'), page('Thanks'));
  fs.writeFileSync(path.join(webRoot, '404.html'), page('Oops! Page not found'));
  fs.writeFileSync(path.join(webRoot, 'assets', 'app-abc123.js'), `console.log(${JSON.stringify('x'.repeat(4000))});`);
  fs.writeFileSync(path.join(webRoot, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
}

describe('site serving and security headers', () => {
  let t: TestApp | undefined;
  const logs: string[] = [];
  afterEach(async () => {
    await t?.close();
    t = undefined;
    logs.length = 0;
  });

  const logStream = () =>
    new Writable({
      write(chunk: Buffer, _enc, done) {
        logs.push(chunk.toString('utf8'));
        done();
      },
    });

  async function start(env: Record<string, string> = {}) {
    t = await createTestApp(env, { logger: { level: 'info', stream: logStream() } });
    return t;
  }

  it('serves prerendered pages uncached, hashed assets immutable and compressed, unknown paths as 404 pages', async () => {
    // Pages are read once at start-up, so the build exists before the app does.
    const webRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'waitlist-web-'));
    writeBuild(webRoot);
    const t = await start({ WEB_ROOT: webRoot });

    const landing = await t.app.inject({ url: '/' });
    expect(landing.statusCode).toBe(200);
    expect(landing.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(landing.headers['cache-control']).toBe('no-cache');
    expect(landing.body).toContain('Landing');

    expect((await t.app.inject({ url: '/thanks' })).body).toContain('Thanks');
    expect((await t.app.inject({ url: '/index.html' })).statusCode).toBe(404);

    const asset = await t.app.inject({ url: '/assets/app-abc123.js', headers: { 'accept-encoding': 'br, gzip' } });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(asset.headers['content-encoding']).toMatch(/^(br|gzip)$/);

    const missing = await t.app.inject({ url: '/no/such/page?x=1' });
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(missing.body).toContain('Oops! Page not found');
    expect(logs.join('')).toContain('/no/such/page');

    const api = await t.app.inject({ url: '/api/nothing-here' });
    expect(api.statusCode).toBe(404);
    expect(api.json()).toEqual({ error: { code: 'not_found', message: 'No route for GET /api/nothing-here' } });
    fs.rmSync(webRoot, { recursive: true, force: true });
  });

  it('sends the security headers on every response', async () => {
    t = await start();
    for (const url of ['/', '/healthz', '/api/nothing-here']) {
      const res = await t.app.inject({ url });
      const csp = String(res.headers['content-security-policy']);
      expect(csp).toMatch(/(^|;)script-src 'self'(;|$)/);
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toMatch(/unsafe-eval/);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['referrer-policy']).toBe('strict-origin-when-cross-origin');
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['strict-transport-security']).toBeUndefined();
    }
  });

  it('adds HSTS only to requests that arrived over HTTPS, as a trusted proxy reports it', async () => {
    t = await start({ TRUST_PROXY: '1' });
    const https = await t.app.inject({ url: '/healthz', headers: { 'x-forwarded-proto': 'https' } });
    expect(https.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
    const plain = await t.app.inject({ url: '/healthz' });
    expect(plain.headers['strict-transport-security']).toBeUndefined();
  });

  it('ignores X-Forwarded-Proto from a client when no proxy is trusted', async () => {
    t = await start();
    const spoofed = await t.app.inject({ url: '/healthz', headers: { 'x-forwarded-proto': 'https' } });
    expect(spoofed.headers['strict-transport-security']).toBeUndefined();
  });

  it('reports health with the database it uses', async () => {
    t = await start();
    const res = await t.app.inject({ url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', database: 'sqlite' });
    expect(res.headers['cache-control']).toBe('no-store');
  });
});
