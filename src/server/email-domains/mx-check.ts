import { Resolver } from 'node:dns/promises';

/**
 * What a domain's DNS says about receiving mail (RFC 5321 §5.1, RFC 7505):
 * - `nxdomain`: the name does not exist;
 * - `null-mx`: its only MX is `0 .`, "this domain accepts no mail";
 * - `deliverable`: anything else that answered: an MX, or no MX at all (an A/AAAA record is then
 *   the implicit MX; a name with neither is let through too: only the two answers above refuse);
 * - `unknown`: no answer in time, or a failure (SERVFAIL, refused, no network). Never refuses.
 */
export type MxVerdict = 'deliverable' | 'nxdomain' | 'null-mx' | 'unknown';

export interface MxCheckOptions {
  /** DNS_SERVERS: `host:port` (or `[v6]:port`) entries; the system's servers when null. */
  servers: string[] | null;
  /** How long a check waits for an answer before it says `unknown` (SIGNUP_MX_TIMEOUT_MS). */
  timeoutMs: number;
  /** Most domains cached (the oldest is dropped first). */
  cacheSize?: number;
  /** How long an answer is kept: a deliverable domain, a dead one, an `unknown` (a failure). */
  ttlMs?: { deliverable: number; dead: number; unknown: number };
  now?: () => number;
}

export interface MxChecker {
  /**
   * The domain's verdict within `waitMs` (timeoutMs by default); never rejects. A lookup that
   * outlives the wait goes on, and its answer is cached for the next check (the mail path's).
   */
  check(domain: string, waitMs?: number): Promise<MxVerdict>;
  /** Cancels the lookups under way (their checks say `unknown`). */
  close(): void;
}

const DEFAULT_TTL = { deliverable: 60 * 60_000, dead: 10 * 60_000, unknown: 30_000 };

/** How a resolveMx answer or error reads. */
function verdictOf(records: Array<{ exchange: string }> | null, code: string | undefined): MxVerdict {
  if (records) {
    // A null MX is an MX whose exchange is the root (node gives ''); RFC 7505 says it stands alone.
    return records.length > 0 && records.every((r) => r.exchange === '' || r.exchange === '.') ? 'null-mx' : 'deliverable';
  }
  if (code === 'ENOTFOUND') return 'nxdomain';
  // ENODATA: the name exists without MX (mail goes to its A/AAAA record, RFC 5321 §5.1).
  if (code === 'ENODATA') return 'deliverable';
  return 'unknown';
}

/**
 * MX checks through node:dns's c-ares resolver (not getaddrinfo: no thread pool, and its own
 * servers), one query per domain, answers kept in a bounded cache; concurrent checks of one domain
 * share its query.
 */
export function createMxChecker(options: MxCheckOptions): MxChecker {
  const { timeoutMs } = options;
  const cacheSize = options.cacheSize ?? 10_000;
  const ttl = options.ttlMs ?? DEFAULT_TTL;
  const now = options.now ?? Date.now;
  // c-ares's own timeout (per try) is longer than the signup's wait, so a slow answer still
  // arrives and is cached for the check before the first e-mail (which waits up to 5 s).
  const resolver = new Resolver({ timeout: Math.max(5_000, 2 * timeoutMs), tries: 2 });
  if (options.servers) resolver.setServers(options.servers);
  const cache = new Map<string, { verdict: MxVerdict; expires: number }>();
  const inFlight = new Map<string, Promise<MxVerdict>>();

  function remember(domain: string, verdict: MxVerdict): void {
    const life = verdict === 'deliverable' ? ttl.deliverable : verdict === 'unknown' ? ttl.unknown : ttl.dead;
    cache.delete(domain);
    cache.set(domain, { verdict, expires: now() + life });
    while (cache.size > cacheSize) cache.delete(cache.keys().next().value!);
  }

  function lookup(domain: string): Promise<MxVerdict> {
    let query = inFlight.get(domain);
    if (!query) {
      query = resolver.resolveMx(domain).then(
        (records) => verdictOf(records, undefined),
        (err: NodeJS.ErrnoException) => verdictOf(null, err.code),
      );
      query = query.then((verdict) => {
        inFlight.delete(domain);
        remember(domain, verdict);
        return verdict;
      });
      inFlight.set(domain, query);
    }
    return query;
  }

  return {
    check(domain, waitMs = timeoutMs) {
      const hit = cache.get(domain);
      if (hit && hit.expires > now()) return Promise.resolve(hit.verdict);
      if (hit) cache.delete(domain);
      const query = lookup(domain);
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<MxVerdict>((resolve) => {
        timer = setTimeout(resolve, waitMs, 'unknown');
      });
      return Promise.race([query, late]).finally(() => clearTimeout(timer));
    },
    close() {
      resolver.cancel();
    },
  };
}
