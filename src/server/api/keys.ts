import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import { toIsoTimestamp } from '../db/database.js';
import type { ApiKeysTable, Database } from '../db/schema.js';
import { recordAudit } from '../audit/audit-log.js';
import { API_KEY_PREFIX, API_KEY_SHOWN_LENGTH, API_SCOPES, isApiScope, type ApiScope } from '../../shared/api/scopes.js';
import type { ApiKeySummary } from '../../shared/admin/api-keys-api.js';

/**
 * The API keys' SQL and rules (the `api_keys` table). A key is 32 random bytes, shown once when it is
 * made; the table keeps only its SHA-256 (decision 061: a hash of a 256-bit secret needs no salt or
 * slow hash, and is looked up directly), its first characters to tell keys apart, its scopes, rate
 * limit, expiry and revocation, and when it was last used (coalesced, see LastUseRecorder).
 */
type Db = Kysely<Database>;

const DAY_MS = 86_400_000;

export const hashApiKey = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

/** Who made a key: an admin from /admin (their id), or the command line (null). */
export interface KeyCreator {
  userId: string | null;
  email: string | null;
  ip: string | null;
}

export interface NewApiKey {
  name: string;
  scopes: readonly ApiScope[];
  expiresInDays?: number | undefined;
  /** Requests per minute (the caller's default: API_RATE_LIMIT). */
  rateLimit: number;
}

/** A key that may be used: what the API's check hands the routes. */
export interface ApiKeyPrincipal {
  id: string;
  scopes: ReadonlySet<ApiScope>;
  rateLimit: number;
}

function toSummary(row: Selectable<ApiKeysTable>): ApiKeySummary {
  const time = (value: Date | string | null) => (value === null ? null : toIsoTimestamp(value));
  return {
    id: row.id,
    name: row.name,
    prefix: row.token_prefix,
    scopes: parseScopes(row.scopes),
    rateLimit: row.rate_limit,
    createdAt: toIsoTimestamp(row.created_at),
    expiresAt: time(row.expires_at),
    revokedAt: time(row.revoked_at),
    lastUsedAt: time(row.last_used_at),
  };
}

function parseScopes(text: string): ApiScope[] {
  return text.split(',').filter(isApiScope);
}

/** Makes a key: resolves to its summary and the key itself (never stored, never shown again). Audited. */
export async function createApiKey(db: Db, input: NewApiKey, by: KeyCreator, now = Date.now()): Promise<{ key: ApiKeySummary; token: string }> {
  const token = `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  const scopes = API_SCOPES.filter((scope) => input.scopes.includes(scope));
  const row = {
    id: randomUUID(),
    name: input.name.trim(),
    token_hash: hashApiKey(token),
    token_prefix: token.slice(0, API_KEY_SHOWN_LENGTH),
    scopes: scopes.join(','),
    rate_limit: input.rateLimit,
    created_at: new Date(now).toISOString(),
    created_by: by.userId,
    expires_at: input.expiresInDays === undefined ? null : new Date(now + input.expiresInDays * DAY_MS).toISOString(),
    revoked_at: null,
    last_used_at: null,
  };
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('api_keys').values(row).execute();
    await recordAudit(trx, {
      action: 'api_key_created',
      actorEmail: by.email,
      actorId: by.userId,
      ip: by.ip,
      detail: { key_id: row.id, scopes, rate_limit: row.rate_limit, expires_at: row.expires_at, by: by.userId === null ? 'cli' : 'admin' },
    });
  });
  return { key: toSummary(row), token };
}

/** Every key, newest first, revoked and expired ones included. */
export async function listApiKeys(db: Db): Promise<ApiKeySummary[]> {
  const rows = await db.selectFrom('api_keys').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
  return rows.map(toSummary);
}

/**
 * Revokes a key now (its uses stop at once: every request reads the table). Null for an unknown id;
 * a key already revoked keeps its first revocation time. Audited.
 */
export async function revokeApiKey(db: Db, id: string, by: KeyCreator, now = Date.now()): Promise<ApiKeySummary | null> {
  return db.transaction().execute(async (trx) => {
    await trx.updateTable('api_keys').set({ revoked_at: new Date(now).toISOString() }).where('id', '=', id).where('revoked_at', 'is', null).execute();
    const row = await trx.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) return null;
    await recordAudit(trx, { action: 'api_key_revoked', actorEmail: by.email, actorId: by.userId, ip: by.ip, detail: { key_id: id, by: by.userId === null ? 'cli' : 'admin' } });
    return toSummary(row);
  });
}

/** Why a key is refused: unknown (or malformed), revoked, expired. */
export type KeyRefusal = 'unknown' | 'revoked' | 'expired';

/** The key a request presents, if it may be used now. */
export async function findUsableApiKey(db: Db, token: string, now = Date.now()): Promise<ApiKeyPrincipal | KeyRefusal> {
  const row = await db
    .selectFrom('api_keys')
    .select(['id', 'scopes', 'rate_limit', 'expires_at', 'revoked_at'])
    .where('token_hash', '=', hashApiKey(token))
    .executeTakeFirst();
  return row ? usable(row, now) : 'unknown';
}

/** The key of a stored id (an export ticket's), if it may still be used now. */
export async function findUsableApiKeyById(db: Db, id: string, now = Date.now()): Promise<ApiKeyPrincipal | KeyRefusal> {
  const row = await db.selectFrom('api_keys').select(['id', 'scopes', 'rate_limit', 'expires_at', 'revoked_at']).where('id', '=', id).executeTakeFirst();
  return row ? usable(row, now) : 'unknown';
}

function usable(row: Pick<Selectable<ApiKeysTable>, 'id' | 'scopes' | 'rate_limit' | 'expires_at' | 'revoked_at'>, now: number): ApiKeyPrincipal | KeyRefusal {
  if (row.revoked_at !== null) return 'revoked';
  if (row.expires_at !== null && new Date(row.expires_at).getTime() <= now) return 'expired';
  return { id: row.id, scopes: new Set(parseScopes(row.scopes)), rateLimit: row.rate_limit };
}

/** How often one instance writes a key's last use at most. */
export const LAST_USE_INTERVAL_MS = 60_000;

/**
 * Records keys' last use without a write per request: a key's `last_used_at` is written when this
 * instance has not written it in the last LAST_USE_INTERVAL_MS (so at most once a minute per key
 * and instance), in the background; a failed write is reported and tried again on a later use.
 */
export class LastUseRecorder {
  private readonly written = new Map<string, number>();
  private readonly pending = new Set<Promise<unknown>>();

  constructor(
    private readonly db: Db,
    private readonly onError: (err: unknown) => void,
    private readonly intervalMs = LAST_USE_INTERVAL_MS,
  ) {}

  used(keyId: string, now = Date.now()): void {
    const last = this.written.get(keyId);
    if (last !== undefined && now - last < this.intervalMs) return;
    this.written.set(keyId, now);
    const write = this.db
      .updateTable('api_keys')
      .set({ last_used_at: new Date(now).toISOString() })
      .where('id', '=', keyId)
      .execute()
      .catch((err: unknown) => {
        this.written.delete(keyId);
        this.onError(err);
      })
      .finally(() => this.pending.delete(write));
    this.pending.add(write);
  }

  /** Waits for the writes under way (before the database closes). */
  async settle(): Promise<void> {
    await Promise.all([...this.pending]);
  }
}
