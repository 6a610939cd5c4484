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

// (No ::ffff:0:0/96 rule: Node's BlockList matches IPv4 addresses against it, and mapped addresses
// are folded to IPv4 by normalizeIp before they get here.)
/** Ranges that never belong to a place: private, loopback, link-local, documentation, multicast... */
const nonPublic = new net.BlockList();
for (const [prefix, bits] of [
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
] as const) {
  nonPublic.addSubnet(prefix, bits, 'ipv4');
}
for (const [prefix, bits] of [
  ['::', 128],
  ['::1', 128],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  nonPublic.addSubnet(prefix, bits, 'ipv6');
}

/** True for a normalised address that can have a geographic location. */
export function isPublicIp(ip: string): boolean {
  const version = net.isIP(ip);
  if (version === 0) return false;
  try {
    return !nonPublic.check(ip, version === 4 ? 'ipv4' : 'ipv6');
  } catch {
    return false; // e.g. an IPv6 zone id (fe80::1%eth0), which is link-local anyway
  }
}
