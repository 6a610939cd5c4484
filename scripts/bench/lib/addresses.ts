/**
 * What the signup benchmark sends: a fresh e-mail address per request, numbered so that the
 * acknowledged ones can be checked against the database afterwards, and a random public client
 * address per request, so the per-IP rate limit and the geolocation lookup work as in production.
 * Public as the server decides it: with its own isPublicIp (../../../src/server/geolocation/ip.ts,
 * which signup.ts and mail.ts transpile with this file).
 */
import { isPublicIp } from '../../../src/server/geolocation/ip.js';

/**
 * How many domains a run's addresses are spread over (signup.ts --email-domains): 0, all at
 * example.com; N, at d0.example.com … d<N-1>.example.com; `fresh`, each at a domain of its own (every
 * signup then asks the MX check's DNS server: its worst case).
 */
export type EmailDomains = number | 'fresh';

export function parseEmailDomains(value: string | undefined): EmailDomains {
  if (value === undefined || value.trim() === '') return 0;
  if (value.trim() === 'fresh') return 'fresh';
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`--email-domains must be a whole number or "fresh", got "${value}"`);
  return n;
}

/** The address of signup number `n` of a run (prefix: letters and digits only, so it is LIKE-safe). */
export function benchEmail(prefix: string, n: number, domains: EmailDomains = 0): string {
  const domain = domains === 'fresh' ? `d${n}.example.com` : domains > 0 ? `d${n % domains}.example.com` : 'example.com';
  return `${prefix}-${n}@${domain}`;
}

/** The number in a stored address of this run, or null for anything else. */
export function benchNumber(prefix: string, email: string): number | null {
  const head = `${prefix}-`;
  const at = email.indexOf('@');
  if (!email.startsWith(head) || at < 0 || !(email.endsWith('@example.com') || email.endsWith('.example.com'))) return null;
  const n = Number(email.slice(head.length, at));
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
}

/** A random public IPv4 address. */
export function randomPublicIpv4(random: () => number = Math.random): string {
  for (;;) {
    const value = Math.floor(random() * 2 ** 32);
    const ip = `${value >>> 24}.${(value >>> 16) & 255}.${(value >>> 8) & 255}.${value & 255}`;
    if (isPublicIp(ip)) return ip;
  }
}

const hexGroup = (random: () => number) => Math.floor(random() * 0x10000).toString(16);

/**
 * A random global unicast IPv6 address (2000::/3), public as the server sees it (so outside the
 * documentation prefix 2001:db8::/32) and outside the tunnelling prefixes (Teredo 2001::/32, 6to4
 * 2002::/16), whose place is not the client's.
 */
export function randomPublicIpv6(random: () => number = Math.random): string {
  for (;;) {
    const first = 0x2000 + Math.floor(random() * 0x2000);
    const second = Math.floor(random() * 0x10000);
    if (first === 0x2002 || (first === 0x2001 && second === 0)) continue;
    const rest = Array.from({ length: 6 }, () => hexGroup(random));
    const ip = [first.toString(16), second.toString(16), ...rest].join(':');
    if (isPublicIp(ip)) return ip;
  }
}

/** A random public client address, IPv6 with probability `ipv6Share`. */
export function randomClientIp(ipv6Share: number, random: () => number = Math.random): string {
  return random() < ipv6Share ? randomPublicIpv6(random) : randomPublicIpv4(random);
}
