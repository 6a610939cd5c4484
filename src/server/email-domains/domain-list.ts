import fs from 'node:fs';
import { createRequire } from 'node:module';
import { getDomain } from 'tldts';

/**
 * A set of domain names held compactly: sorted, joined into one string with the offsets of each
 * name, and looked up by binary search. The throwaway list (about 120,000 names) takes about 2.5 MB
 * of heap this way, where a Set of strings takes about 7 MB.
 */
export class DomainList {
  private readonly text: string;
  /** The start of each name in `text`, and one past the end of the last (so name i is [starts[i], starts[i+1] - 1)). */
  private readonly starts: Uint32Array;

  constructor(domains: Iterable<string>) {
    const sorted = [...new Set(domains)].sort();
    this.text = sorted.join('\n');
    this.starts = new Uint32Array(sorted.length + 1);
    let at = 0;
    sorted.forEach((name, i) => {
      this.starts[i] = at;
      at += name.length + 1;
    });
    this.starts[sorted.length] = at;
  }

  get size(): number {
    return this.starts.length - 1;
  }

  has(name: string): boolean {
    let lo = 0;
    let hi = this.size - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const order = this.compareAt(mid, name);
      if (order === 0) return true;
      if (order < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return false;
  }

  /** Name i against `name`, by UTF-16 code units (the order of Array.prototype.sort). */
  private compareAt(i: number, name: string): number {
    const start = this.starts[i]!;
    const length = this.starts[i + 1]! - 1 - start;
    const common = Math.min(length, name.length);
    for (let k = 0; k < common; k++) {
      const d = this.text.charCodeAt(start + k) - name.charCodeAt(k);
      if (d !== 0) return d;
    }
    return length - name.length;
  }
}

/**
 * The names to look up for an address's domain: the domain itself and each parent down to its
 * registrable domain (the public-suffix rules, tldts), so `mx.mailinator.com` matches a listed
 * `mailinator.com`, and a listed host below a registrable domain matches too.
 */
export function domainCandidates(domain: string): string[] {
  const registrable = getDomain(domain) ?? domain;
  const names = [domain];
  let name = domain;
  while (name !== registrable && name.length > registrable.length) {
    const dot = name.indexOf('.');
    if (dot < 0) break;
    name = name.slice(dot + 1);
    names.push(name);
  }
  return names;
}

/** True when the domain, or a parent of it down to its registrable domain, is in one of the lists. */
export function isListed(domain: string, lists: ReadonlyArray<{ has(name: string): boolean }>): boolean {
  return domainCandidates(domain).some((name) => lists.some((list) => list.has(name)));
}

const require = createRequire(import.meta.url);
let packageList: DomainList | undefined;

/**
 * The throwaway-mail domains of the `disposable-email-domains` package (index.json and its
 * wildcard.json, whose names' subdomains are throwaway too, which domainCandidates covers), read
 * from node_modules on first use (not bundled: 2 MB of source the server would keep) and kept for
 * the process. About 80 ms once.
 */
export function disposableDomains(): DomainList {
  if (packageList) return packageList;
  const read = (file: string) => JSON.parse(fs.readFileSync(require.resolve(`disposable-email-domains/${file}`), 'utf8')) as string[];
  packageList = new DomainList([...read('index.json'), ...read('wildcard.json')].map((name) => name.trim().toLowerCase()).filter((name) => name !== ''));
  return packageList;
}

/**
 * SIGNUP_BLOCKED_DOMAINS_FILE's names: one domain per line; `#` starts a comment (a whole line or
 * the rest of one); blank lines are skipped; a leading `@` or `*.` is dropped (`*.example.com` and
 * `example.com` mean the same: subdomains always match). Lower-cased.
 */
export function parseBlockedDomains(text: string): string[] {
  const names: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const name = line.replace(/#.*/, '').trim().toLowerCase().replace(/^(@|\*\.)/, '').replace(/\.$/, '');
    if (name !== '') names.push(name);
  }
  return names;
}
