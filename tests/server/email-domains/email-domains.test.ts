import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, type EmailDomainsConfig } from '../../../src/server/config.js';
import { createEmailDomainScreen, type EmailDomainScreen } from '../../../src/server/email-domains/index.js';
import { DomainList, disposableDomains, domainCandidates, parseBlockedDomains } from '../../../src/server/email-domains/domain-list.js';
import { createMxChecker, type MxChecker } from '../../../src/server/email-domains/mx-check.js';
import { startDnsServer, type TestDnsServer } from '../../support/dns.js';

/**
 * Address screening by domain (src/server/email-domains): the throwaway list, the operator's file,
 * and the MX check against a real DNS server started here (tests/support/dns.ts).
 */

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const silentLog = { info: () => undefined, warn: () => undefined };

async function dnsServer(): Promise<TestDnsServer> {
  const server = await startDnsServer({
    'mx.test': { kind: 'mx', exchange: 'mail.mx.test' },
    'null.test': { kind: 'null-mx' },
    'a-only.test': { kind: 'a-only', address: '192.0.2.10' },
    'silent.test': { kind: 'silent' },
    'broken.test': { kind: 'servfail' },
  });
  cleanups.push(() => server.close());
  return server;
}

function checker(server: TestDnsServer, options: { timeoutMs?: number; cacheSize?: number } = {}): MxChecker {
  const mx = createMxChecker({ servers: [server.address], timeoutMs: options.timeoutMs ?? 2_000, ...(options.cacheSize ? { cacheSize: options.cacheSize } : {}) });
  cleanups.push(() => mx.close());
  return mx;
}

function screen(config: Partial<EmailDomainsConfig>, options: { fileWatchIntervalMs?: number } = {}): EmailDomainScreen {
  const s = createEmailDomainScreen({ blockDisposable: true, blockedDomainsFile: null, checkMx: false, mxTimeoutMs: 1000, dnsServers: null, ...config }, silentLog, options);
  cleanups.push(() => s.close());
  return s;
}

describe('the throwaway list', () => {
  it('a compact list finds exactly its names', () => {
    const list = new DomainList(['b.example', 'a.example', 'c.example', 'a.example', 'ab.example']);
    expect(list.size).toBe(4);
    for (const name of ['a.example', 'ab.example', 'b.example', 'c.example']) expect(list.has(name), name).toBe(true);
    for (const name of ['', 'a.exampl', 'a.examplee', 'aa.example', 'd.example', '0.example', 'z']) expect(list.has(name), name).toBe(false);
    expect(new DomainList([]).has('a.example')).toBe(false);
  });

  it('holds the package list, matched on the registrable domain and its subdomains', () => {
    const list = disposableDomains();
    expect(list.size).toBeGreaterThan(100_000);
    expect(list.has('mailinator.com')).toBe(true);
    expect(list.has('gmail.com')).toBe(false);
    expect(domainCandidates('mx.eu.mailinator.com')).toEqual(['mx.eu.mailinator.com', 'eu.mailinator.com', 'mailinator.com']);
    // The public-suffix rules: co.uk is a suffix, so example.co.uk is where the walk stops.
    expect(domainCandidates('a.example.co.uk')).toEqual(['a.example.co.uk', 'example.co.uk']);
  });

  it('refuses a listed domain and its subdomains; SIGNUP_BLOCK_DISPOSABLE=off lets them through', async () => {
    const on = screen({});
    expect(await on.screen('someone@mailinator.com')).toBe('disposable');
    expect(await on.screen('someone@inbox.mailinator.com')).toBe('disposable');
    expect(await on.screen('someone@10minutemail.com')).toBe('disposable');
    expect(await on.screen('someone@gmail.com')).toBeNull();
    expect(await on.screen('someone@permanent-mail.example')).toBeNull();
    const off = screen({ blockDisposable: false });
    expect(await off.screen('someone@mailinator.com')).toBeNull();
  });

  it("reads the operator's file (comments, blank lines, @ and *. prefixes), and again when it changes", async () => {
    expect(parseBlockedDomains('# our list\n\nBlocked.Example  # a comment\n@at.example\n*.wild.example\ntrailing.example.\n')).toEqual([
      'blocked.example',
      'at.example',
      'wild.example',
      'trailing.example',
    ]);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'blocked-domains-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'blocked.txt');
    fs.writeFileSync(file, '# throwaway domains we saw\nfirst.example\n');
    // The file applies even with the package's list off.
    const s = screen({ blockDisposable: false, blockedDomainsFile: file }, { fileWatchIntervalMs: 20 });
    expect(await s.screen('a@first.example')).toBe('disposable');
    expect(await s.screen('a@sub.first.example')).toBe('disposable');
    expect(await s.screen('a@second.example')).toBeNull();

    // Rewritten (as an editor does: a new file renamed over it): read again, no restart.
    fs.writeFileSync(`${file}.new`, 'second.example\n');
    fs.renameSync(`${file}.new`, file);
    await expect.poll(() => s.screen('a@second.example'), { timeout: 10_000 }).toBe('disposable');
    expect(await s.screen('a@first.example')).toBeNull();
  });

  it('a file that cannot be read stops the start', () => {
    expect(() => createEmailDomainScreen({ blockDisposable: true, blockedDomainsFile: '/nonexistent/blocked.txt', checkMx: false, mxTimeoutMs: 1000, dnsServers: null }, silentLog)).toThrow(/ENOENT/);
  });
});

describe('the MX check, against a DNS server', () => {
  it('NXDOMAIN and a null MX are dead; an MX, or an A record without MX, can receive mail; a failure is unknown', async () => {
    const server = await dnsServer();
    const mx = checker(server);
    expect(await mx.check('mx.test')).toBe('deliverable');
    expect(await mx.check('a-only.test')).toBe('deliverable');
    expect(await mx.check('null.test')).toBe('null-mx');
    expect(await mx.check('gone.test')).toBe('nxdomain');
    expect(await mx.check('broken.test')).toBe('unknown');
  });

  it('a server that never answers: unknown once the wait is over, never a refusal', async () => {
    const server = await dnsServer();
    const s = createEmailDomainScreen({ blockDisposable: true, blockedDomainsFile: null, checkMx: true, mxTimeoutMs: 100, dnsServers: [server.address] }, silentLog);
    cleanups.push(() => s.close());
    expect(await s.screen('a@silent.test')).toBeNull();
    expect(server.queries.get('silent.test')).toBeGreaterThanOrEqual(1);
  });

  it('an answer slower than the wait lets the signup through, and is cached for the check before the first e-mail', async () => {
    const server = await dnsServer();
    server.zones.set('late.test', { kind: 'nxdomain', delayMs: 1500 });
    const s = createEmailDomainScreen({ blockDisposable: true, blockedDomainsFile: null, checkMx: true, mxTimeoutMs: 50, dnsServers: [server.address] }, silentLog);
    cleanups.push(() => s.close());
    expect(await s.screen('a@late.test')).toBeNull();
    // The mail path waits longer: the same query's answer, not a second one.
    expect(await s.undeliverable('a@late.test')).toBe('the recipient domain does not exist (NXDOMAIN)');
    expect(server.queries.get('late.test')).toBe(1);
    expect(await s.screen('a@late.test')).toBe('dead-domain');
  });

  it('answers are cached per domain, concurrent checks share one query, and the cache is bounded', async () => {
    const server = await dnsServer();
    const mx = checker(server, { cacheSize: 2 });
    const answers = await Promise.all([mx.check('mx.test'), mx.check('mx.test'), mx.check('mx.test')]);
    expect(answers).toEqual(['deliverable', 'deliverable', 'deliverable']);
    expect(await mx.check('mx.test')).toBe('deliverable');
    expect(server.queries.get('mx.test')).toBe(1);
    // Two more domains push mx.test out of a cache of two: it is asked again.
    await mx.check('null.test');
    await mx.check('a-only.test');
    expect(await mx.check('mx.test')).toBe('deliverable');
    expect(server.queries.get('mx.test')).toBe(2);
  });

  it('SIGNUP_CHECK_MX=off asks no DNS at all', async () => {
    const server = await dnsServer();
    const s = createEmailDomainScreen({ blockDisposable: true, blockedDomainsFile: null, checkMx: false, mxTimeoutMs: 1000, dnsServers: [server.address] }, silentLog);
    cleanups.push(() => s.close());
    expect(await s.screen('a@gone.test')).toBeNull();
    expect(await s.undeliverable('a@gone.test')).toBeNull();
    expect(server.queries.size).toBe(0);
  });
});

describe('configuration', () => {
  it('is on by default, with the system DNS servers and a 1 s bound', () => {
    expect(loadConfig({}).emailDomains).toEqual({ blockDisposable: true, blockedDomainsFile: null, checkMx: true, mxTimeoutMs: 1000, dnsServers: null });
  });

  it('reads the switches, the file, the bound and DNS_SERVERS; refuses bad values', () => {
    const config = loadConfig({
      SIGNUP_BLOCK_DISPOSABLE: 'off',
      SIGNUP_CHECK_MX: 'off',
      SIGNUP_BLOCKED_DOMAINS_FILE: '/etc/waitlist/blocked.txt',
      SIGNUP_MX_TIMEOUT_MS: '250',
      DNS_SERVERS: ' 127.0.0.1:5353 , [::1]:53 ',
    }).emailDomains;
    expect(config).toEqual({ blockDisposable: false, blockedDomainsFile: '/etc/waitlist/blocked.txt', checkMx: false, mxTimeoutMs: 250, dnsServers: ['127.0.0.1:5353', '[::1]:53'] });
    for (const env of [{ DNS_SERVERS: 'dns.example:53' }, { SIGNUP_MX_TIMEOUT_MS: '0' }, { SIGNUP_CHECK_MX: 'yes' }]) {
      expect(() => loadConfig(env), JSON.stringify(env)).toThrow(ConfigError);
    }
  });
});
