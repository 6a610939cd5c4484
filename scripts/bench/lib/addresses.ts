/**
 * What the signup benchmark sends: a fresh e-mail address per request, numbered so that the
 * acknowledged ones can be checked against the database afterwards, and a random public client
 * address per request, so the per-IP rate limit and the geolocation lookup work as in production.
 */

/** The address of signup number `n` of a run (prefix: letters and digits only, so it is LIKE-safe). */
export function benchEmail(prefix: string, n: number): string {
  return `${prefix}-${n}@example.com`;
}

/** The number in a stored address of this run, or null for anything else. */
export function benchNumber(prefix: string, email: string): number | null {
  const head = `${prefix}-`;
  if (!email.startsWith(head) || !email.endsWith('@example.com')) return null;
  const n = Number(email.slice(head.length, -'@example.com'.length));
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
}

// Ranges no real client comes from (as src/server/geolocation/ip.ts sees them), as [first, last].
const NON_PUBLIC_V4: ReadonlyArray<readonly [number, number]> = (
  [
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
    ['224.0.0.0', 3], // multicast and reserved, 224.0.0.0 to 255.255.255.255
  ] as const
).map(([dotted, bits]) => {
  const first = dotted.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);
  return [first, first + 2 ** (32 - bits) - 1] as const;
});

function isPublicV4(value: number): boolean {
  for (const [first, last] of NON_PUBLIC_V4) if (value >= first && value <= last) return false;
  return true;
}

/** A random public IPv4 address. */
export function randomPublicIpv4(random: () => number = Math.random): string {
  for (;;) {
    const value = Math.floor(random() * 2 ** 32);
    if (isPublicV4(value)) return `${value >>> 24}.${(value >>> 16) & 255}.${(value >>> 8) & 255}.${value & 255}`;
  }
}

const hexGroup = (random: () => number) => Math.floor(random() * 0x10000).toString(16);

/**
 * A random global unicast IPv6 address (2000::/3), outside the documentation prefix 2001:db8::/32
 * and the tunnelling prefixes (Teredo 2001::/32, 6to4 2002::/16), whose place is not the client's.
 */
export function randomPublicIpv6(random: () => number = Math.random): string {
  for (;;) {
    const first = 0x2000 + Math.floor(random() * 0x2000);
    const second = Math.floor(random() * 0x10000);
    if (first === 0x2002 || (first === 0x2001 && (second === 0 || second === 0xdb8))) continue;
    const rest = Array.from({ length: 6 }, () => hexGroup(random));
    return [first.toString(16), second.toString(16), ...rest].join(':');
  }
}

/** A random public client address, IPv6 with probability `ipv6Share`. */
export function randomClientIp(ipv6Share: number, random: () => number = Math.random): string {
  return random() < ipv6Share ? randomPublicIpv6(random) : randomPublicIpv4(random);
}
