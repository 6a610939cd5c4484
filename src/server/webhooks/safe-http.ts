import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { isPublicIp, normalizeIp } from '../geolocation/ip.js';

/**
 * The webhook's HTTP POST, made safe to point at any URL an admin typed (docs/decisions/058):
 *
 * - Never to a private, loopback, link-local (or otherwise non-public: geolocation/ip.ts's ranges)
 *   address unless `allowPrivate` (WEBHOOK_ALLOW_PRIVATE=1). Checked twice: every address the name
 *   resolves to, in the `lookup` the request connects with (so the check and the connection use the
 *   same answer: DNS rebinding cannot slip a second, private answer in between), and the socket's
 *   remote address once connected (whatever path led there). A literal IP in the URL is checked too.
 * - Names resolved by the system (dns.lookup: the hosts file, then its DNS), or by the DNS_SERVERS
 *   the MX check uses too, when they are set (addressResolver).
 * - No redirect is ever followed (node:http does not): a 3xx is a failed attempt.
 * - One deadline for the whole attempt (connect, TLS, the answer's status line and headers); the
 *   answer's body is not read.
 * - No connection reuse and no proxy from the environment.
 */

export interface PostOptions {
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  allowPrivate: boolean;
  /** How the URL's name becomes addresses (addressResolver); the system's by default. */
  resolve?: AddressResolver;
}

export type PostOutcome =
  | { kind: 'answered'; status: number; retryAfter: string | null }
  /** No answer: refused (a private address), unreachable, reset, timed out. */
  | { kind: 'failed'; error: string; refused: boolean };

/** Thrown for an address the webhook may not connect to. */
export class PrivateAddressError extends Error {
  readonly code = 'EPRIVATEADDRESS';
}

/** The URL's host as an IP literal (IPv6 without its brackets), or null when it is a name. */
export function literalIp(hostname: string): string | null {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return net.isIP(bare) !== 0 ? bare : null;
}

/** True for an address a webhook may reach without WEBHOOK_ALLOW_PRIVATE (IPv4-mapped forms folded first). */
export function isPublicAddress(address: string): boolean {
  const ip = normalizeIp(address);
  return ip !== null && isPublicIp(ip);
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/** A name's addresses, as a connection's `lookup` gets them (`options`: its family and hints). */
export type AddressResolver = (hostname: string, options: dns.LookupOptions) => Promise<dns.LookupAddress[]>;

const noAddress = (hostname: string) => Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' });

const systemResolver: AddressResolver = (hostname, options) => dns.promises.lookup(hostname, { ...options, all: true });

/**
 * The resolver a webhook connects with: the system's (dns.lookup), or, with `servers` (DNS_SERVERS,
 * as the MX check takes them), their A and AAAA answers, asked directly (no hosts file, no cache).
 */
export function addressResolver(servers: readonly string[] | null): AddressResolver {
  if (!servers) return systemResolver;
  const resolver = new dns.promises.Resolver({ timeout: 5_000, tries: 2 });
  resolver.setServers(servers);
  return async (hostname, options) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : (options.family ?? 0);
    const [v4, v6] = await Promise.allSettled([
      family === 6 ? Promise.resolve<string[]>([]) : resolver.resolve4(hostname),
      family === 4 ? Promise.resolve<string[]>([]) : resolver.resolve6(hostname),
    ]);
    const addresses = [
      ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
    ];
    if (addresses.length > 0) return addresses;
    const reason: unknown = v4.status === 'rejected' ? v4.reason : v6.status === 'rejected' ? v6.reason : undefined;
    throw reason instanceof Error ? reason : noAddress(hostname);
  };
}

/** The connection's `lookup`: `resolve`, failing unless every address the name has is public (unless `allowPrivate`). */
function connectLookup(resolve: AddressResolver, allowPrivate: boolean) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    resolve(hostname, options).then(
      (addresses) => {
        if (addresses.length === 0) return callback(noAddress(hostname), []);
        const refused = allowPrivate ? undefined : addresses.find((a) => !isPublicAddress(a.address));
        if (refused) {
          return callback(new PrivateAddressError(`${hostname} resolves to a non-public address (${refused.address}); set WEBHOOK_ALLOW_PRIVATE=1 to allow it`), []);
        }
        if (options.all) return callback(null, addresses);
        const first = addresses[0]!;
        callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, []),
    );
  };
}

/** Why a URL can never be posted to (not http(s), credentials, a private literal IP), or null. */
export function urlProblem(raw: string, allowPrivate: boolean): { code: 'invalid_url' | 'private_address'; message: string } | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { code: 'invalid_url', message: 'Enter a full http:// or https:// URL.' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { code: 'invalid_url', message: 'The URL must start with https:// or http://.' };
  if (url.username || url.password) return { code: 'invalid_url', message: 'Put no user name or password in the URL.' };
  if (url.hash) return { code: 'invalid_url', message: 'The URL must not have a #fragment.' };
  const ip = literalIp(url.hostname);
  if (ip !== null && !allowPrivate && !isPublicAddress(ip)) {
    return { code: 'private_address', message: 'That address is private, loopback or link-local: webhooks are never sent there (WEBHOOK_ALLOW_PRIVATE is off).' };
  }
  return null;
}

const describe = (err: unknown) => (err instanceof Error ? `${(err as NodeJS.ErrnoException).code ?? 'Error'}: ${err.message}` : String(err)).slice(0, 500);

/** POSTs `body` to `url`; resolves (never rejects) once the status line and headers arrived, or with why not. */
export function postOnce(rawUrl: string, options: PostOptions): Promise<PostOutcome> {
  const problem = urlProblem(rawUrl, options.allowPrivate);
  if (problem) return Promise.resolve({ kind: 'failed', error: problem.message, refused: problem.code === 'private_address' });
  const url = new URL(rawUrl);
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<PostOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: PostOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const request = client.request(url, {
      method: 'POST',
      agent: false,
      headers: { ...options.headers, 'content-length': String(Buffer.byteLength(options.body)) },
      lookup: connectLookup(options.resolve ?? systemResolver, options.allowPrivate) as unknown as net.LookupFunction,
    });
    const timer = setTimeout(() => {
      request.destroy(new Error(`no answer within ${options.timeoutMs} ms`));
    }, options.timeoutMs);
    request.on('socket', (socket) => {
      if (options.allowPrivate) return;
      socket.once('connect', () => {
        const remote = socket.remoteAddress;
        if (remote === undefined || !isPublicAddress(remote)) {
          request.destroy(new PrivateAddressError(`connected to a non-public address (${remote ?? 'unknown'}); set WEBHOOK_ALLOW_PRIVATE=1 to allow it`));
        }
      });
    });
    request.on('response', (response) => {
      const retryAfter = response.headers['retry-after'];
      finish({ kind: 'answered', status: response.statusCode ?? 0, retryAfter: typeof retryAfter === 'string' ? retryAfter : null });
      // The body is not needed: the connection goes (it is never reused).
      response.destroy();
      request.destroy();
    });
    request.on('error', (err) => {
      const refused = err instanceof PrivateAddressError;
      finish({ kind: 'failed', error: describe(err), refused });
    });
    request.end(options.body);
  });
}
