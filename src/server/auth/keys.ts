import { randomUUID, type webcrypto } from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import type { Kysely } from 'kysely';
import { toIsoTimestamp } from '../db/database.js';
import type { Database } from '../db/schema.js';
import type { SecretBox } from '../crypto/secret-box.js';

type CryptoKey = webcrypto.CryptoKey;

export const JWT_ALGORITHM = 'ES256';

export interface KeyRing {
  /** The newest non-retired key this instance can open signs every new access token. */
  signing: { kid: string; privateKey: CryptoKey };
  /** Every non-retired key (by kid) is accepted when verifying. */
  verifying: Map<string, CryptoKey>;
  /** Public JWKs as published at /.well-known/jwks.json. */
  jwks: JWK[];
}

export interface KeyRingOptions {
  /** Seals the private JWKs (context `jwk:<kid>`), so a database dump alone cannot mint tokens. */
  secretBox: SecretBox;
  /** The access-token lifetime (JWT_EXPIRY_SECONDS): how long a replaced key must keep verifying. */
  tokenLifetimeSeconds: number;
  /** Where to report keys this instance cannot open (another AUTH_SECRET_KEY sealed them). */
  warn?: (message: string) => void;
}

interface CacheEntry {
  ring: Promise<KeyRing>;
  loadedAt: number;
}

/** One ring per database handle; every app and CLI sharing a database shares its keys. */
const cache = new WeakMap<Kysely<Database>, CacheEntry>();
const settings = new WeakMap<Kysely<Database>, KeyRingOptions>();
/** An unknown kid triggers at most one reload per this interval (another instance may have rotated). */
const RELOAD_INTERVAL_MS = 30_000;
/** A ring is re-read after this long, so every instance picks up `admin rotate-key` within it. */
export const RING_MAX_AGE_MS = 5 * 60_000;
/** Clock differences between instances (and the database) allowed for when retiring a key. */
const CLOCK_SKEW_MS = 60_000;

/**
 * How long a key keeps verifying after a newer one was created: an instance may sign with it until
 * its ring is re-read, and each token it signed lives for the token lifetime.
 */
export function retirementDelayMs(tokenLifetimeSeconds: number): number {
  return tokenLifetimeSeconds * 1000 + RING_MAX_AGE_MS + CLOCK_SKEW_MS;
}

function publicJwkFor(jwk: JWK, kid: string): JWK {
  // Never publish `ext:false` (auth-js imports keys as extractable) nor private fields.
  return { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y, kid, alg: JWT_ALGORITHM, use: 'sig', key_ops: ['verify'] };
}

/** The sealing context of a signing key's private JWK (also used by `admin rotate-secret`). */
export const sealContext = (kid: string) => `jwk:${kid}`;

function optionsFor(db: Kysely<Database>): KeyRingOptions {
  const options = settings.get(db);
  if (!options) throw new Error('the signing keys need the secret box: call configureKeyRing(db, …) or pass the options to getKeyRing');
  return options;
}

async function loadRows(db: Kysely<Database>) {
  return db
    .selectFrom('auth_signing_keys')
    .select(['kid', 'generation', 'private_jwk', 'public_jwk', 'created_at'])
    .where('retired_at', 'is', null)
    .orderBy('generation', 'desc')
    .execute();
}

/**
 * Inserts a new key pair at `generation`, its private half sealed. Two instances creating the same
 * generation at once agree: the loser's insert is a no-op. Returns the new kid, or null if it lost.
 */
async function insertKey(db: Kysely<Database>, box: SecretBox, generation: number): Promise<string | null> {
  const { privateKey, publicKey } = await generateKeyPair(JWT_ALGORITHM, { extractable: true });
  const kid = randomUUID();
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: JWT_ALGORITHM };
  const publicJwk = publicJwkFor(await exportJWK(publicKey), kid);
  const result = await db
    .insertInto('auth_signing_keys')
    .values({
      kid,
      generation,
      algorithm: JWT_ALGORITHM,
      private_jwk: box.seal(JSON.stringify(privateJwk), sealContext(kid)),
      public_jwk: JSON.stringify(publicJwk),
      created_at: new Date().toISOString(),
      retired_at: null,
    })
    .onConflict((oc) => oc.column('generation').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0 ? kid : null;
}

async function nextGeneration(db: Kysely<Database>): Promise<number> {
  const row = await db.selectFrom('auth_signing_keys').select((eb) => eb.fn.max('generation').as('max')).executeTakeFirst();
  return Number(row?.max ?? 0) + 1;
}

/**
 * Seals every private key still stored in clear (a database from before encryption at rest). The
 * update only applies if the row still holds that clear text, so concurrent starts do not clash.
 * Returns how many keys still in use (not retired) this call sealed: those keys are in older dumps
 * and backups in clear, so they must be replaced (buildRing rotates).
 */
async function sealLegacyKeys(db: Kysely<Database>, box: SecretBox): Promise<number> {
  const rows = await db.selectFrom('auth_signing_keys').select(['kid', 'private_jwk', 'retired_at']).execute();
  let sealedInUse = 0;
  for (const row of rows) {
    if (box.isSealed(row.private_jwk)) continue;
    const result = await db
      .updateTable('auth_signing_keys')
      .set({ private_jwk: box.seal(row.private_jwk, sealContext(row.kid)) })
      .where('kid', '=', row.kid)
      .where('private_jwk', '=', row.private_jwk)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 1 && row.retired_at === null) sealedInUse += 1;
  }
  return sealedInUse;
}

/** Inserts the next generation's key, trying again if another instance took that generation first. */
async function insertNextKey(db: Kysely<Database>, box: SecretBox): Promise<{ kid: string; generation: number }> {
  for (;;) {
    const generation = await nextGeneration(db);
    const kid = await insertKey(db, box, generation);
    if (kid !== null) return { kid, generation };
  }
}

/**
 * Retires every key that a newer one replaced long enough ago that no token it signed can still
 * be valid (see retirementDelayMs). Retired keys neither sign nor verify.
 */
async function retireReplacedKeys(db: Kysely<Database>, rows: Awaited<ReturnType<typeof loadRows>>, options: KeyRingOptions): Promise<Set<string>> {
  const retired = new Set<string>();
  const cutoff = Date.now() - retirementDelayMs(options.tokenLifetimeSeconds);
  // rows are newest first: a key is replaced when the next newer key was created.
  for (let i = 1; i < rows.length; i++) {
    const replacedAt = Date.parse(toIsoTimestamp(rows[i - 1]!.created_at));
    if (replacedAt < cutoff) retired.add(rows[i]!.kid);
  }
  if (retired.size > 0) {
    await db
      .updateTable('auth_signing_keys')
      .set({ retired_at: new Date().toISOString() })
      .where('kid', 'in', [...retired])
      .where('retired_at', 'is', null)
      .execute();
  }
  return retired;
}

async function openPrivateKey(box: SecretBox, row: { kid: string; private_jwk: string }): Promise<CryptoKey | null> {
  try {
    const privateJwk = JSON.parse(box.open(row.private_jwk, sealContext(row.kid))) as JWK;
    return (await importJWK(privateJwk, JWT_ALGORITHM)) as CryptoKey;
  } catch {
    return null;
  }
}

async function buildRing(db: Kysely<Database>, options: KeyRingOptions): Promise<KeyRing> {
  const box = options.secretBox;
  if ((await sealLegacyKeys(db, box)) > 0) {
    // Security review, finding 9: a key that was stored in clear is in every older dump and backup
    // as it is, so it is replaced at once (by the one instance whose seal won). It keeps verifying
    // the tokens it signed until they have expired, then it is retired like any replaced key.
    const { kid } = await insertNextKey(db, box);
    options.warn?.(`a signing key was stored in clear by an earlier version: it is sealed now and replaced by the new key ${kid}`);
  }
  let rows = await loadRows(db);
  if (rows.length === 0) {
    await insertKey(db, box, 1);
    rows = await loadRows(db);
  }
  const retired = await retireReplacedKeys(db, rows, options);
  rows = rows.filter((row) => !retired.has(row.kid));

  let signing: KeyRing['signing'] | null = null;
  for (const row of rows) {
    const privateKey = await openPrivateKey(box, row);
    if (privateKey) {
      signing = { kid: row.kid, privateKey };
      break;
    }
    options.warn?.(`signing key ${row.kid} was sealed with another AUTH_SECRET_KEY (or key file) and cannot sign here`);
  }
  if (!signing) {
    // None of the keys opens with this secret key (it was lost or replaced): start a new
    // generation. Tokens signed by the old keys keep verifying (public keys) until they retire.
    options.warn?.('no signing key opens with this secret key; creating a new signing key');
    await insertKey(db, box, await nextGeneration(db));
    return buildRing(db, options);
  }

  const verifying = new Map<string, CryptoKey>();
  const jwks: JWK[] = [];
  for (const row of rows) {
    const publicJwk = JSON.parse(row.public_jwk) as JWK;
    verifying.set(row.kid, (await importJWK(publicJwk, JWT_ALGORITHM)) as CryptoKey);
    jwks.push(publicJwkFor(publicJwk, row.kid));
  }
  return { signing, verifying, jwks };
}

/**
 * Gives the key ring of `db` its secret box and token lifetime (the app does this once at start;
 * a CLI before rotating). Later calls of getKeyRing(db) use them.
 */
export function configureKeyRing(db: Kysely<Database>, options: KeyRingOptions): void {
  settings.set(db, options);
}

/**
 * The key ring for this database, loading (or creating, on first start) lazily, and re-reading it
 * once it is RING_MAX_AGE_MS old (keys rotated or retired elsewhere). `options` configures the
 * ring for this handle first (see configureKeyRing).
 */
export function getKeyRing(db: Kysely<Database>, options?: KeyRingOptions): Promise<KeyRing> {
  if (options) configureKeyRing(db, options);
  const hit = cache.get(db);
  if (hit && Date.now() - hit.loadedAt < RING_MAX_AGE_MS) return hit.ring;
  const loaded = buildRing(db, optionsFor(db));
  // A failed re-read keeps serving the ring we had; a failed first load must not stick.
  const ring = hit ? loaded.catch(() => hit.ring) : loaded;
  cache.set(db, { ring, loadedAt: Date.now() });
  ring.catch(() => {
    if (cache.get(db)?.ring === ring) cache.delete(db);
  });
  return ring;
}

/** Looks a verification key up by kid, reloading from the database (rate-limited) when it is unknown. */
export async function getVerificationKey(db: Kysely<Database>, kid: string): Promise<CryptoKey | null> {
  const ring = await getKeyRing(db);
  const key = ring.verifying.get(kid);
  if (key) return key;
  const entry = cache.get(db);
  if (entry && Date.now() - entry.loadedAt < RELOAD_INTERVAL_MS) return null;
  cache.delete(db);
  return (await getKeyRing(db)).verifying.get(kid) ?? null;
}

/** Forgets cached keys (tests, or after rotating keys in the database). The configuration stays. */
export function clearKeyCache(db: Kysely<Database>): void {
  cache.delete(db);
}

export class SecretKeyMismatchError extends Error {
  constructor() {
    super('none of the current signing keys opens with this secret key: use the AUTH_SECRET_KEY (or AUTH_SECRET_KEY_FILE) of the server');
    this.name = 'SecretKeyMismatchError';
  }
}

export interface Rotation {
  kid: string;
  generation: number;
  /** The keys that still verify until they retire, with the time they will. */
  previous: Array<{ kid: string; retiresAfter: string }>;
}

/**
 * Makes a new signing key (the next generation). This handle signs with it at once, other
 * instances within RING_MAX_AGE_MS; the keys it replaces keep verifying until every token they
 * signed has expired, then the next ring load retires them.
 */
export async function rotateSigningKey(db: Kysely<Database>, options?: KeyRingOptions): Promise<Rotation> {
  if (options) configureKeyRing(db, options);
  const settingsNow = optionsFor(db);
  // A CLI run with another secret key than the servers' would add a key they cannot use.
  const current = await loadRows(db);
  const opens = await Promise.all(current.map((row) => (settingsNow.secretBox.isSealed(row.private_jwk) ? openPrivateKey(settingsNow.secretBox, row) : true)));
  if (current.length > 0 && !opens.some(Boolean)) throw new SecretKeyMismatchError();
  await getKeyRing(db); // seal legacy keys and retire expired ones first
  const { kid, generation } = await insertNextKey(db, settingsNow.secretBox);
  clearKeyCache(db);
  await getKeyRing(db);
  const delay = retirementDelayMs(settingsNow.tokenLifetimeSeconds);
  const rows = await loadRows(db);
  // Newest first: each older key retires `delay` after the key that replaced it was created.
  const previous = rows.slice(1).map((row, i) => ({
    kid: row.kid,
    retiresAfter: new Date(Date.parse(toIsoTimestamp(rows[i]!.created_at)) + delay).toISOString(),
  }));
  return { kid, generation, previous };
}
