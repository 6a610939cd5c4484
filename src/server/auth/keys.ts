import { randomUUID, type webcrypto } from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

type CryptoKey = webcrypto.CryptoKey;

export const JWT_ALGORITHM = 'ES256';

export interface KeyRing {
  /** The newest non-retired key signs every new access token. */
  signing: { kid: string; privateKey: CryptoKey };
  /** Every non-retired key (by kid) is accepted when verifying. */
  verifying: Map<string, CryptoKey>;
  /** Public JWKs as published at /.well-known/jwks.json. */
  jwks: JWK[];
}

interface CacheEntry {
  ring: Promise<KeyRing>;
  loadedAt: number;
}

/** One ring per database handle; every app and CLI sharing a database shares its keys. */
const cache = new WeakMap<Kysely<Database>, CacheEntry>();
/** An unknown kid triggers at most one reload per this interval (another instance may have rotated). */
const RELOAD_INTERVAL_MS = 30_000;

function publicJwkFor(jwk: JWK, kid: string): JWK {
  // Never publish `ext:false` (auth-js imports keys as extractable) nor private fields.
  return { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y, kid, alg: JWT_ALGORITHM, use: 'sig', key_ops: ['verify'] };
}

async function loadRows(db: Kysely<Database>) {
  return db
    .selectFrom('auth_signing_keys')
    .select(['kid', 'generation', 'private_jwk', 'public_jwk'])
    .where('retired_at', 'is', null)
    .orderBy('generation', 'desc')
    .execute();
}

/** Creates the first key pair; if another instance wins the race the insert is a no-op and we re-read. */
async function createFirstKey(db: Kysely<Database>): Promise<void> {
  const { privateKey, publicKey } = await generateKeyPair(JWT_ALGORITHM, { extractable: true });
  const kid = randomUUID();
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: JWT_ALGORITHM };
  const publicJwk = publicJwkFor(await exportJWK(publicKey), kid);
  await db
    .insertInto('auth_signing_keys')
    .values({
      kid,
      generation: 1,
      algorithm: JWT_ALGORITHM,
      private_jwk: JSON.stringify(privateJwk),
      public_jwk: JSON.stringify(publicJwk),
      created_at: new Date().toISOString(),
      retired_at: null,
    })
    .onConflict((oc) => oc.column('generation').doNothing())
    .execute();
}

async function buildRing(db: Kysely<Database>): Promise<KeyRing> {
  let rows = await loadRows(db);
  if (rows.length === 0) {
    await createFirstKey(db);
    rows = await loadRows(db);
  }
  const newest = rows[0];
  if (!newest) throw new Error('no signing key could be created');
  const verifying = new Map<string, CryptoKey>();
  const jwks: JWK[] = [];
  let signingKey: CryptoKey | null = null;
  for (const row of rows) {
    const publicJwk = JSON.parse(row.public_jwk) as JWK;
    verifying.set(row.kid, (await importJWK(publicJwk, JWT_ALGORITHM)) as CryptoKey);
    jwks.push(publicJwkFor(publicJwk, row.kid));
    if (row.kid === newest.kid) {
      const privateJwk = JSON.parse(row.private_jwk) as JWK;
      signingKey = (await importJWK(privateJwk, JWT_ALGORITHM)) as CryptoKey;
    }
  }
  if (!signingKey) throw new Error('signing key could not be imported');
  return { signing: { kid: newest.kid, privateKey: signingKey }, verifying, jwks };
}

/** The key ring for this database, loading (or creating on first start) lazily. */
export function getKeyRing(db: Kysely<Database>): Promise<KeyRing> {
  const hit = cache.get(db);
  if (hit) return hit.ring;
  const ring = buildRing(db);
  cache.set(db, { ring, loadedAt: Date.now() });
  // A failed load must not stick: the next call retries.
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

/** Forgets cached keys (tests, or after rotating keys in the database). */
export function clearKeyCache(db: Kysely<Database>): void {
  cache.delete(db);
}
