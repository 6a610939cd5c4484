import net from 'node:net';

const MAPPED_DOTTED = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;
const MAPPED_HEX = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i;

/**
 * The address as it is stored and looked up: trimmed, IPv4-mapped IPv6 (`::ffff:1.2.3.4`, also the
 * hex form `::ffff:102:304`) turned into plain IPv4, IPv6 lower-cased. Anything that is not an IP
 * address (with TRUST_PROXY an X-Forwarded-For value can hold any text) gives null.
 */
export function normalizeIp(raw: string | null | undefined): string | null {
  if (typeof raw !== 'string') return null;
  let ip = raw.trim();
  if (ip.startsWith('[') && ip.endsWith(']')) ip = ip.slice(1, -1);
  const dotted = MAPPED_DOTTED.exec(ip);
  if (dotted?.[1] && net.isIPv4(dotted[1])) return dotted[1];
  const hex = MAPPED_HEX.exec(ip);
  if (hex?.[1] && hex[2]) {
    const high = parseInt(hex[1], 16);
    const low = parseInt(hex[2], 16);
    return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
  }
  if (net.isIPv4(ip)) return ip;
  if (net.isIPv6(ip)) return ip.toLowerCase();
  return null;
}

/**
 * The address as a rate limit counts it: IPv4 (mapped forms folded) as is, IPv6 reduced to its /64,
 * since one client usually owns a whole /64 and could otherwise rotate through it for a fresh
 * budget on every attempt (the signup limit groups the same way). Not an IP: the trimmed text.
 */
export function rateLimitAddress(raw: string): string {
  const ip = normalizeIp(raw.split('%')[0]);
  if (!ip) return raw.trim();
  if (!net.isIPv6(ip)) return ip;
  const [head = '', tail = ''] = ip.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === '' ? [] : tail.split(':');
  // An embedded dotted IPv4 tail counts as two groups; only the first four groups matter here.
  const tailCount = tailGroups.reduce((n, g) => n + (g.includes('.') ? 2 : 1), 0);
  const groups = ip.includes('::') ? [...headGroups, ...Array<string>(Math.max(0, 8 - headGroups.length - tailCount)).fill('0'), ...tailGroups] : headGroups;
  return `${groups.slice(0, 4).map((g) => (g.includes('.') ? g : parseInt(g, 16).toString(16))).join(':')}::/64`;
}

/** A dotted IPv4 address as a 32-bit number (0 to 2^32 - 1); -1 when it is not one. */
export function ipv4Value(ip: string): number {
  const parts = ip.split('.');
  if (parts.length !== 4) return -1;
  let value = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return -1;
    const octet = Number(part);
    if (octet > 255) return -1;
    value = value * 256 + octet;
  }
  return value;
}

function hexGroups(parts: string[]): number[] | null {
  const groups: number[] = [];
  for (const part of parts) {
    if (part.includes('.')) {
      const v4 = ipv4Value(part);
      if (v4 < 0) return null;
      groups.push(Math.floor(v4 / 65536), v4 % 65536);
    } else {
      if (!/^[0-9a-fA-F]{1,4}$/.test(part)) return null;
      groups.push(parseInt(part, 16));
    }
  }
  return groups;
}

/** IPv6 text to four big-endian 32-bit words in `out`; false when it is not an IPv6 address (a zone id included). */
export function ipv6Words(ip: string, out: Uint32Array): boolean {
  const gap = ip.indexOf('::');
  const head = gap >= 0 ? ip.slice(0, gap) : ip;
  const tail = gap >= 0 ? ip.slice(gap + 2) : '';
  const headGroups = hexGroups(head === '' ? [] : head.split(':'));
  const tailGroups = hexGroups(tail === '' ? [] : tail.split(':'));
  if (!headGroups || !tailGroups) return false;
  const missing = 8 - headGroups.length - tailGroups.length;
  if (gap >= 0 ? missing < 0 : missing !== 0) return false;
  const groups = [...headGroups, ...Array<number>(missing).fill(0), ...tailGroups];
  for (let w = 0; w < 4; w++) out[w] = groups[2 * w]! * 65536 + groups[2 * w + 1]!;
  return true;
}

/**
 * Ranges that never belong to a place: private, loopback, link-local, documentation, multicast...
 * (No ::ffff:0:0/96 rule: mapped addresses are folded to IPv4 by normalizeIp before they get here.)
 * Declared here only: the signup benchmark's load generator draws its client addresses outside
 * them through isPublicIp (scripts/bench/lib/addresses.ts), so this module imports nothing but
 * node:net (the benchmark runs it as plain JavaScript).
 */
export const NON_PUBLIC_PREFIXES = {
  ipv4: [
    ['0.0.0.0', 8],
    ['10.0.0.0', 8],
    ['100.64.0.0', 10],
    ['127.0.0.0', 8],
    ['169.254.0.0', 16],
    ['172.16.0.0', 12],
    ['192.0.0.0', 24],
    ['192.0.2.0', 24],
    ['192.168.0.0', 16],
    ['198.18.0.0', 15],
    ['198.51.100.0', 24],
    ['203.0.113.0', 24],
    ['224.0.0.0', 4],
    ['240.0.0.0', 4],
  ],
  ipv6: [
    ['::', 128],
    ['::1', 128],
    ['100::', 64],
    ['2001:db8::', 32],
    ['fc00::', 7],
    ['fe80::', 10],
    ['ff00::', 8],
  ],
} as const;

const NON_PUBLIC = new net.BlockList();
for (const [prefix, bits] of NON_PUBLIC_PREFIXES.ipv4) NON_PUBLIC.addSubnet(prefix, bits, 'ipv4');
for (const [prefix, bits] of NON_PUBLIC_PREFIXES.ipv6) NON_PUBLIC.addSubnet(prefix, bits, 'ipv6');

/** True for a normalised address that can have a geographic location. */
export function isPublicIp(ip: string): boolean {
  const family = net.isIP(ip);
  // Not an address (BlockList.check answers false for those), or IPv6 with a zone id (link-local anyway).
  if (family === 0 || ip.includes('%')) return false;
  return !NON_PUBLIC.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}
