/** The sections of AppConfig (config.ts) for the features: each read from its environment variables there. */

export interface EmailDomainsConfig {
  /** SIGNUP_BLOCK_DISPOSABLE: refuse the `disposable-email-domains` package's throwaway domains (on by default). */
  blockDisposable: boolean;
  /** SIGNUP_BLOCKED_DOMAINS_FILE: more domains to refuse, one a line, read again when it changes (absolute path). */
  blockedDomainsFile: string | null;
  /** SIGNUP_CHECK_MX: refuse domains whose DNS says they receive no mail (NXDOMAIN, null MX); on by default. */
  checkMx: boolean;
  /** SIGNUP_MX_TIMEOUT_MS: the longest a signup waits for DNS; a slower answer lets it through. */
  mxTimeoutMs: number;
  /** DNS_SERVERS: `host:port` entries for the MX check; null = the system's servers. */
  dnsServers: string[] | null;
}

export interface RecordsConfig {
  /**
   * RECORDS_RETENTION_YEARS: a kept version is deleted only this many years after its last use
   * (17 CFR 227.404: five years). Below 5 only with RECORDS_RETENTION_OVERRIDE=1.
   */
  retentionYears: number;
}

export interface WebhooksConfig {
  /** WEBHOOK_ALLOW_PRIVATE=1: deliveries may go to private, loopback and link-local addresses. */
  allowPrivate: boolean;
  /** DNS_SERVERS: the endpoints' names are resolved with these (as the MX check's); null: the system's resolver. */
  dnsServers: string[] | null;
  /** WEBHOOK_TIMEOUT_MS: the deadline of one attempt (connect, TLS, the answer's headers). */
  timeoutMs: number;
  /** WEBHOOK_RETRY_HOURS: how long after it was queued a delivery is still retried. */
  retryWindowMs: number;
  /** WEBHOOK_RETENTION_DAYS: finished deliveries (and their events) are deleted after this. */
  retentionDays: number;
  /** WEBHOOK_MAX_ENDPOINTS: the most endpoints there may be. */
  maxEndpoints: number;
  /** WEBHOOK_SECRET_OVERLAP_HOURS: after a rotation, the previous secret signs too for this long. */
  secretOverlapMs: number;
}

export interface ChallengeConfig {
  /** SIGNUP_CHALLENGE: `proof-of-work` holds signups without a valid ALTCHA solution; `off` = the spec's flow. */
  mode: 'off' | 'proof-of-work';
  /** SIGNUP_CHALLENGE_MAX_NUMBER: the difficulty, the largest number the browser may have to try. */
  maxNumber: number;
  /** SIGNUP_CHALLENGE_TTL_SECONDS: how long a challenge may be solved and used. */
  ttlSeconds: number;
}

export interface ConsentConfig {
  /** SIGNUP_CONFIRMATION: `required` = double opt-in (needs SMTP_URL); `off` = the spec's flow. */
  confirmation: 'off' | 'required';
  /** CONFIRMATION_LINK_TTL_HOURS: how long a confirmation link works after it was sent. */
  confirmationLinkTtlSeconds: number;
  /** CONFIRMATION_RESEND_SECONDS: a pending address signing up again gets a new e-mail at most this often. */
  confirmationResendSeconds: number;
  /** MAIL_WELCOME: `on` sends the welcome e-mail once an entry has joined (after confirmation when it is required). */
  welcome: boolean;
  /** MAIL_RETENTION_DAYS: sent and failed outbox messages older than this are deleted (personal data kept only as long as needed). */
  outboxRetentionDays: number;
}

export interface MailConfig {
  /** `smtp://` or `smtps://` URL, credentials included (nodemailer's connection URL). */
  smtpUrl: string;
  /** The From header: an address, optionally with a display name (`Product <hello@example.com>`). */
  from: string;
  /** The public origin (PUBLIC_URL); its host names the Message-IDs. */
  publicUrl: string;
  /** DKIM signing, when the three DKIM_* variables are set. */
  dkim: { domainName: string; keySelector: string; privateKey: string } | null;
  /** Sending attempts before a message is marked failed. */
  maxAttempts: number;
  /** The caps on confirmation e-mails (mail/caps.ts, docs/email.md); 0 turns one off. */
  caps: MailCapSettings;
}

export interface MailCapSettings {
  /** MAIL_CAP_PER_ADDRESS: confirmation e-mails to one address in 24 hours. */
  perAddress: number;
  /** MAIL_CAP_PER_DOMAIN_HOURLY: to one recipient domain in an hour. */
  perDomainHourly: number;
  /** MAIL_CAP_PER_CLIENT_HOURLY: caused by one client address in an hour. */
  perClientHourly: number;
  /** MAIL_CONFIRMATION_BUDGET_HOURLY: sent by all instances in an hour; the rest waits in the outbox. */
  budgetHourly: number;
}
