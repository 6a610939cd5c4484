import fs from 'node:fs';
import type { EmailDomainsConfig } from '../config.js';
import { DomainList, disposableDomains, isListed, parseBlockedDomains } from './domain-list.js';
import { createMxChecker, type MxChecker, type MxVerdict } from './mx-check.js';

/**
 * Address screening by domain (issue 28, point 3; decision 051): throwaway-mail domains (the
 * `disposable-email-domains` package, plus SIGNUP_BLOCKED_DOMAINS_FILE) and domains whose DNS
 * says they cannot receive mail (NXDOMAIN, null MX). Neutral infrastructure: the signup room asks
 * it before storing a signup, the mail room before sending a message for the first time.
 */
export type DomainRefusal = 'disposable' | 'dead-domain';

export interface EmailDomainScreen {
  /** Why a signup with this address (validated, lower-cased) is refused, or null; waits at most SIGNUP_MX_TIMEOUT_MS for DNS. */
  screen(email: string): Promise<DomainRefusal | null>;
  /**
   * Before a message's first send: why its recipient's domain cannot receive it (a text for the
   * outbox), or null. A DNS failure or timeout is null: the message goes.
   */
  undeliverable(address: string): Promise<string | null>;
  close(): void;
}

export interface ScreenLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** How long the mail path waits for DNS: no visitor waits there. */
const MAIL_PATH_WAIT_MS = 5_000;

const DEAD: Partial<Record<MxVerdict, string>> = {
  nxdomain: 'the recipient domain does not exist (NXDOMAIN)',
  'null-mx': 'the recipient domain accepts no mail (null MX, RFC 7505)',
};

function domainOf(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1).toLowerCase().replace(/\.$/, '');
}

/**
 * SIGNUP_BLOCKED_DOMAINS_FILE, read now (a file that cannot be read stops the start) and again
 * whenever it changes: its size, modification time and inode are looked at every few seconds (so an
 * editor's write-and-rename is seen too), against those of the text last read. A change that
 * cannot be read keeps the previous names.
 */
function watchBlockedFile(file: string, log: ScreenLog, intervalMs: number): { list: () => DomainList; close(): void } {
  const stamp = (stats: fs.Stats) => `${stats.ino}:${stats.size}:${stats.mtimeMs}`;
  const read = () => {
    const fd = fs.openSync(file, 'r');
    try {
      return { stamp: stamp(fs.fstatSync(fd)), list: new DomainList(parseBlockedDomains(fs.readFileSync(fd, 'utf8'))) };
    } finally {
      fs.closeSync(fd);
    }
  };
  let current = read();
  let looking = false;
  // One warning while the file stays unreadable, not one every interval.
  let warned = false;
  const timer = setInterval(() => {
    if (looking) return;
    looking = true;
    fs.promises
      .stat(file)
      .then((stats) => {
        if (stamp(stats) === current.stamp) return;
        current = read();
        warned = false;
        log.info({ file, domains: current.list.size }, 'signup screening: blocked domains file read again');
      })
      .catch((err: unknown) => {
        if (!warned) log.warn({ err, file }, 'signup screening: blocked domains file unreadable; keeping its previous names');
        warned = true;
      })
      .finally(() => (looking = false));
  }, intervalMs);
  timer.unref();
  return { list: () => current.list, close: () => clearInterval(timer) };
}

export interface ScreenOptions {
  /** How often the blocked-domains file is looked at (tests shorten it). */
  fileWatchIntervalMs?: number;
}

export function createEmailDomainScreen(config: EmailDomainsConfig, log: ScreenLog, options: ScreenOptions = {}): EmailDomainScreen {
  const blockedFile = config.blockedDomainsFile ? watchBlockedFile(config.blockedDomainsFile, log, options.fileWatchIntervalMs ?? 5_000) : null;
  const mx: MxChecker | null = config.checkMx ? createMxChecker({ servers: config.dnsServers, timeoutMs: config.mxTimeoutMs }) : null;
  const lists = () => {
    const found: DomainList[] = [];
    if (config.blockDisposable) found.push(disposableDomains());
    if (blockedFile) found.push(blockedFile.list());
    return found;
  };
  return {
    async screen(email) {
      const domain = domainOf(email);
      if (isListed(domain, lists())) return 'disposable';
      if (!mx) return null;
      const verdict = await mx.check(domain);
      return verdict === 'nxdomain' || verdict === 'null-mx' ? 'dead-domain' : null;
    },
    async undeliverable(address) {
      if (!mx) return null;
      return DEAD[await mx.check(domainOf(address), MAIL_PATH_WAIT_MS)] ?? null;
    },
    close() {
      blockedFile?.close();
      mx?.close();
    },
  };
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Address screening by domain (email-domains/index.ts): the signup route and the mail worker ask it. */
    emailDomains: EmailDomainScreen;
  }
}
