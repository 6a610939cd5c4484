import type { ColumnType, Generated } from 'kysely';
import type { AdminRole } from '../../shared/admin/roles.js';
import type { EntryStatus } from '../../shared/waitlist/entry.js';

/**
 * Table types, one interface per table. Timestamps are written as ISO strings and read back as
 * `Date` (PostgreSQL timestamptz) or `string` (SQLite TEXT); repositories normalise them.
 */
export type Timestamp = ColumnType<Date | string, string, string>;

export interface WaitlistTable {
  id: string;
  email: string;
  created_at: Timestamp;
  ip_address: string | null;
  country: string | null;
  city: string | null;
  region: string | null;
  /** Where the entry stands for e-mail (src/shared/waitlist/entry.ts ENTRY_STATUSES). */
  status: Generated<EntryStatus>;
  /** The consent record (src/shared/site/content.ts `consent.version`) the visitor joined under. */
  consent_version: string | null;
  /** When the last confirmation e-mail was queued (resends are rate limited per address). */
  confirmation_sent_at: Timestamp | null;
  /** When and from where the confirmation link was used (double opt-in). */
  confirmed_at: Timestamp | null;
  confirmed_ip: string | null;
  invited_at: Timestamp | null;
  unsubscribed_at: Timestamp | null;
  /** Attribution (src/shared/waitlist/attribution.ts); all null for entries without one. */
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
  utm_term: string | null;
  utm_content: string | null;
  referrer: string | null;
  landing_path: string | null;
  source: string | null;
  /** The records_consents row of the texts the person was given when joining (src/server/records); null before issue 30, and for imports. */
  consent_record: string | null;
  /** Why a `held` entry was held (src/shared/waitlist/entry.ts HELD_REASONS); null for every other status. */
  held_reason: string | null;
  /** The list the entry is on (lists.id): 0 is the portal's waitlist (migration 2026-11-29T0900). */
  list_id: ColumnType<number, number | undefined, number>;
  /** An offering list's non-binding intended amount: a band key (src/shared/lists/contract.ts), or null. */
  intended_amount: string | null;
}

/** The portal's waitlist (id 0) and the offering lists (src/server/db/lists.ts; issue 31). */
export interface ListsTable {
  id: number;
  slug: string;
  kind: 'portal' | 'testing-the-waters';
  state: 'draft' | 'open' | 'closed';
  name: string;
  description: string;
  /** JSON array of the bands' boundaries in whole US dollars ([1000, 5000, 25000]), or null: no amount asked. */
  amount_bands: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** Proof-of-work challenges already used (signup/challenge.ts), kept until they expire (Unix seconds). */
export interface SignupChallengesSpentTable {
  signature: string;
  expires_at: ColumnType<number | string, number, never>;
}

/** Erased addresses, as keyed hashes only (app.secretBox.hmac, context SUPPRESSION_HASH_CONTEXT). */
export interface WaitlistSuppressionsTable {
  email_hash: string;
  /** Why: `erased` (by the person, from the e-mail's preferences page). */
  reason: string;
  created_at: Timestamp;
  /** The check value of the keyed-hash key that made `email_hash` (suppressionKeyCheck); null before 2026-11-29. */
  key_check: string | null;
}

/** Admin accounts (every user is an admin). Email is stored lower-cased and unique. */
export interface AdminUsersTable {
  id: string;
  email: string;
  password_hash: string;
  /** JSON object as text (GoTrue `user_metadata`). */
  user_metadata: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  last_sign_in_at: Timestamp | null;
  /** 'owner' | 'admin' | 'viewer' (src/shared/admin/roles.ts); the database's copy is the one checked on every admin request. */
  role: ColumnType<AdminRole, AdminRole | undefined, AdminRole>;
}

/** One row per signed-in device; the JWT `session_id`. Deleting the row signs the device out. */
export interface AdminSessionsTable {
  id: string;
  user_id: string;
  created_at: Timestamp;
  /** Last sign-in or refresh on this session. */
  updated_at: Timestamp;
  user_agent: string | null;
  ip_address: string | null;
  /** `aal2` once a second factor was verified on this session (GoTrue's authenticator assurance level). */
  aal: Generated<'aal1' | 'aal2'>;
  /** The factor that raised the session to aal2. */
  factor_id: string | null;
  /** JSON list of `{method, timestamp}` added after the password sign-in (whose entry is `created_at`). */
  amr: Generated<string>;
  /** Last real use (sign-in, admin API call, PUT /user), for the inactivity timeout; null on rows older than the column. */
  last_active_at: Timestamp | null;
}

/** TOTP factors (GoTrue's mfa_factors). `friendly_name` is unique per user; '' when none was given. */
export interface AdminMfaFactorsTable {
  id: string;
  user_id: string;
  friendly_name: string;
  factor_type: 'totp';
  status: 'unverified' | 'verified';
  /** The base32 secret, sealed with app.secretBox (context `totp:<id>`). */
  secret: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  last_challenged_at: Timestamp | null;
  /** The newest accepted TOTP time step (bigint: the driver may return a string); a code works once. */
  last_verified_step: number | string | null;
}

/** One challenge per code entry (GoTrue's mfa_challenges): 300 s, one use, bound to the client IP. */
export interface AdminMfaChallengesTable {
  id: string;
  factor_id: string;
  ip_address: string;
  created_at: Timestamp;
  verified_at: Timestamp | null;
}

/** A wrong or replayed TOTP code (auth/mfa.ts): counted per challenge and per account and hour. */
export interface AdminMfaFailuresTable {
  id: string;
  user_id: string;
  factor_id: string;
  challenge_id: string;
  ip_address: string | null;
  created_at: Timestamp;
}

/** Keys the secret box keeps across a change of AUTH_SECRET_KEY, sealed with it (auth/secret-rotation.ts). */
export interface AuthSecretBoxKeysTable {
  /** `hmac`: the keyed-hash key. */
  name: string;
  sealed_key: string;
  created_at: Timestamp;
}

/** Opaque refresh tokens, stored only as SHA-256 hashes (hex). */
export interface AdminRefreshTokensTable {
  id: string;
  token_hash: string;
  session_id: string;
  user_id: string;
  /** The token this one was rotated from. */
  parent_id: string | null;
  revoked_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** ES256 signing keys shared by every instance. `generation` is unique so concurrent creators agree. */
export interface AuthSigningKeysTable {
  kid: string;
  generation: number;
  algorithm: string;
  /** Private JWK as JSON text. */
  private_jwk: string;
  /** Public JWK as JSON text. */
  public_jwk: string;
  created_at: Timestamp;
  retired_at: Timestamp | null;
}

/** Fixed-window counters for brute-force limits (shared by every instance). */
export interface AuthRateLimitsTable {
  key: string;
  /** Window start in Unix milliseconds (bigint in PostgreSQL; the driver may return it as a string). */
  window_start_ms: number | string;
  count: number;
}

/**
 * PostgreSQL only: the entries per UTC day and status (dim 1), country (2), source (3), campaign (4)
 * and confirmed (5), as deltas kept by triggers (migration 2026-11-27T0900): the insight panel's
 * counts, and (dim 1 summed) the whole list's count.
 */
export interface WaitlistRollupTable {
  id: Generated<string>;
  /** The list (migration 2026-11-29T0900). */
  list_id: Generated<number>;
  day: string;
  dim: number;
  value: string | null;
  n: string;
}

/** Held and refused signups per UTC hour and reason (migration 2026-11-29T0300; signup/screening-counter.ts). */
export interface SignupScreeningTable {
  /** Hours since 1970-01-01T00:00Z. */
  hour: number;
  /** A ScreeningReason (src/shared/waitlist/screening.ts). */
  reason: string;
  n: number;
}

export interface AuditLogTable {
  id: string;
  created_at: Timestamp;
  action: string;
  actor_email: string | null;
  actor_id: string | null;
  ip_address: string | null;
  /** JSON object as text. */
  detail: string;
}

/** Export downloads by ticket (src/server/export/tickets.ts): one per Export click, a day at most. */
export interface ExportDownloadsTable {
  id: string;
  /** SHA-256 (hex) of the one-time ticket; the ticket itself is never stored. */
  ticket_hash: string;
  /** The admin who asked (with session_id), or null when an API key did (api_key_id). */
  user_id: string | null;
  /** The admin session that asked: it must still be active when the ticket is used. */
  session_id: string | null;
  /** The API key that asked (src/server/api): it must still be usable when the ticket is used. */
  api_key_id: string | null;
  /** The export request (JSON) until the ticket is used, then null. */
  request: string | null;
  status: Generated<'ready' | 'running' | 'done' | 'failed'>;
  rows: number | null;
  message: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
  /** While `running`: last written when the server said it was still sending (every HEARTBEAT_MS). */
  heartbeat_at: Timestamp | null;
  finished_at: Timestamp | null;
}

/** Keys of the versioned API (src/server/api/keys.ts): only the key's SHA-256 is stored. */
export interface ApiKeysTable {
  id: string;
  name: string;
  /** SHA-256 (hex) of the whole key (`wl_…`). */
  token_hash: string;
  /** The key's first characters (`wl_AbCd1234`), shown in lists to tell keys apart. */
  token_prefix: string;
  /** Comma-separated scopes (src/shared/api/scopes.ts). */
  scopes: string;
  /** Requests per minute this key may make. */
  rate_limit: number;
  created_at: Timestamp;
  /** The admin who created it from /admin; null from the command line (or once that admin is deleted). */
  created_by: string | null;
  expires_at: Timestamp | null;
  revoked_at: Timestamp | null;
  /** When it was last used, to the minute (written at most once a minute per key and instance). */
  last_used_at: Timestamp | null;
}

/** The e-mail outbox (src/server/mail/outbox.ts): every message to send, and what became of it. */
export interface MailOutboxTable {
  id: string;
  /** The RFC 5322 Message-ID, `<uuid@host-of-PUBLIC_URL>`, fixed at enqueue so a retry is the same message. */
  message_id: string;
  /** What the message is for (`test`, later `confirmation`, `invite`…). */
  kind: string;
  to_address: string;
  subject: string;
  text_body: string;
  html_body: string | null;
  /** JSON object of extra header name → value, as text. */
  headers: Generated<string>;
  /**
   * A templated message (subject kept for the outbox view, text_body empty): the registered
   * template's name and its data as JSON text; rendered by the worker at send time.
   */
  template: string | null;
  template_data: string | null;
  status: Generated<'queued' | 'sending' | 'sent' | 'failed'>;
  /** Sending attempts so far (counted when a worker claims the row). */
  attempts: Generated<number>;
  next_attempt_at: Timestamp;
  /** While `sending`: the claim ends then; a row whose lease expired (a crashed sender) is claimable again. */
  lease_until: Timestamp | null;
  /** While `sending`: the token of the claim holding the lease; only it may renew the lease or record the outcome. */
  lease_token: string | null;
  last_error: string | null;
  created_at: Timestamp;
  sent_at: Timestamp | null;
}

/** Every version of every text shown or sent (src/server/records): stored once, never changed. */
export interface RecordsVersionsTable {
  /** `<kind>:<name>@<16 hex of hash>`. */
  id: string;
  kind: 'page' | 'statement' | 'legends' | 'email';
  /** The page's file, `consent`, `footer`, or the e-mail template's name. */
  name: string;
  /** SHA-256 (hex) of `parts`. */
  hash: string;
  /** JSON object as text: part name (`page.html`, `subject.txt`…) → the text as served. */
  parts: string;
  created_at: Timestamp;
  first_used_at: Timestamp | null;
  last_used_at: Timestamp | null;
  /** bigint: the driver may return a string. */
  use_count: ColumnType<number | string, number | undefined, number | string>;
}

/** The versions a signup was given (waitlist.consent_record names a row). */
export interface RecordsConsentsTable {
  id: string;
  /** Null when the server had no web build (development, tests). */
  page_version: string | null;
  statement_version: string;
  legends_version: string;
  created_at: Timestamp;
}

/** Each e-mail sent and its template version; kept after the outbox row, deleted once the entry is gone (no foreign key). */
export interface RecordsMailSendsTable {
  message_id: string;
  entry_id: string | null;
  template: string;
  version_id: string;
  sent_at: Timestamp;
}

/** A webhook endpoint (src/server/webhooks): where events are posted, signed with its secret. */
export interface WebhookEndpointsTable {
  id: string;
  url: string;
  /** `*` (every event) or the subscribed types between commas: `,signup.created,invite.sent,`. */
  events: string;
  /** 1 or 0; disabled by an admin, or by the endpoint answering 410 Gone (`disabled_reason`). */
  enabled: Generated<number>;
  disabled_reason: string | null;
  /** The signing secret (`whsec_…`), sealed with the secret box (context `webhook:<id>`). */
  secret: string;
  /** After a rotation: the replaced secret, sealed, still signing until `previous_secret_until`. */
  previous_secret: string | null;
  previous_secret_until: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** An event as posted (its `webhook-id` and JSON body), whatever number of endpoints take it. */
export interface WebhookEventsTable {
  /** `msg_…`: the `webhook-id` header, the same on every attempt and replay. */
  id: string;
  type: string;
  /** The waitlist entry it is about; its events are deleted when the entry is erased. */
  entry_id: string | null;
  payload: string;
  created_at: Timestamp;
}

/** One event to one endpoint: queued with the change that caused it, sent with a lease like the outbox. */
export interface WebhookDeliveriesTable {
  id: string;
  event_id: string;
  endpoint_id: string;
  status: Generated<'queued' | 'sending' | 'delivered' | 'failed'>;
  attempts: Generated<number>;
  next_attempt_at: Timestamp;
  lease_until: Timestamp | null;
  lease_token: string | null;
  /** The HTTP status of the last answer; null when there was none (refused, timed out). */
  response_status: number | null;
  last_error: string | null;
  created_at: Timestamp;
  finished_at: Timestamp | null;
}

export interface Database {
  waitlist: WaitlistTable;
  lists: ListsTable;
  waitlist_suppressions: WaitlistSuppressionsTable;
  waitlist_rollup: WaitlistRollupTable;
  signup_challenges_spent: SignupChallengesSpentTable;
  admin_users: AdminUsersTable;
  admin_sessions: AdminSessionsTable;
  admin_refresh_tokens: AdminRefreshTokensTable;
  admin_mfa_factors: AdminMfaFactorsTable;
  admin_mfa_challenges: AdminMfaChallengesTable;
  admin_mfa_failures: AdminMfaFailuresTable;
  auth_signing_keys: AuthSigningKeysTable;
  auth_secret_box_keys: AuthSecretBoxKeysTable;
  auth_rate_limits: AuthRateLimitsTable;
  audit_log: AuditLogTable;
  mail_outbox: MailOutboxTable;
  export_downloads: ExportDownloadsTable;
  signup_screening: SignupScreeningTable;
  records_versions: RecordsVersionsTable;
  records_consents: RecordsConsentsTable;
  records_mail_sends: RecordsMailSendsTable;
  api_keys: ApiKeysTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
}

export type { Generated };
