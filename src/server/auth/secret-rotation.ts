import type { Kysely } from 'kysely';
import { recordAudit } from '../audit/audit-log.js';
import type { AppConfig } from '../config.js';
import type { Database } from '../db/schema.js';
import { rotateSigningKey, sealContext, type Rotation } from './keys.js';
import { totpSecretContext } from './mfa.js';
import { createSecretBox, hmacKeyOf, loadOrCreateKeyFile, withPreviousKeys, type SecretBox } from '../crypto/secret-box.js';

/**
 * Changing AUTH_SECRET_KEY (security review, finding 9). The servers run for a while with the new
 * key as AUTH_SECRET_KEY and the old one as AUTH_SECRET_KEY_PREVIOUS: they seal with the new key and
 * open with either. `npm run admin -- rotate-secret` then re-seals every sealed value with the new
 * key and makes a new signing key; after that the old key can go.
 *
 * The keyed-hash key cannot change with it: the suppression list holds hashes of erased addresses
 * that nobody can hash again, and e-mails already sent carry link tokens. It is derived from the
 * secret key until the first rotation, which stores it in `auth_secret_box_keys`, sealed with the
 * new key (so a dump alone still cannot recompute a hash).
 */

export type SecretKeys = Pick<AppConfig['auth'], 'secretKey' | 'secretKeyFile' | 'previousSecretKey'>;

const HASHING_KEY = 'hmac';
const HASHING_KEY_CONTEXT = 'secret-box:hmac';

/** AUTH_SECRET_KEY, or the key file's key (created on first use). */
function currentKey(auth: SecretKeys): Buffer {
  return auth.secretKey ?? loadOrCreateKeyFile(auth.secretKeyFile);
}

export class SecretKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretKeyError';
  }
}

/**
 * The keyed-hash key in force and its stored, sealed form: the stored one (opened with the current
 * or the previous key); else, while a previous key is set (nothing re-sealed yet), the previous
 * key's; else the current key's.
 */
async function hashingKeyInForce(db: Kysely<Database>, current: Buffer, previous: Buffer | null): Promise<{ key: Buffer; sealed: string | null }> {
  const row = await db.selectFrom('auth_secret_box_keys').select('sealed_key').where('name', '=', HASHING_KEY).executeTakeFirst();
  if (!row) return { key: hmacKeyOf(previous ?? current), sealed: null };
  try {
    const box = withPreviousKeys(createSecretBox(current), previous ? [previous] : []);
    return { key: Buffer.from(box.open(row.sealed_key, HASHING_KEY_CONTEXT), 'base64'), sealed: row.sealed_key };
  } catch {
    throw new SecretKeyError(
      'the stored hashing key opens neither with AUTH_SECRET_KEY nor with AUTH_SECRET_KEY_PREVIOUS: use the secret key that `npm run admin -- rotate-secret` last ran with',
    );
  }
}

/**
 * The server's secret box: seals with AUTH_SECRET_KEY (or its key file), opens with it or with
 * AUTH_SECRET_KEY_PREVIOUS, hashes with the keyed-hash key in force.
 */
export async function loadSecretBox(auth: SecretKeys, db: Kysely<Database>): Promise<SecretBox> {
  const current = currentKey(auth);
  const { key } = await hashingKeyInForce(db, current, auth.previousSecretKey);
  return withPreviousKeys(createSecretBox(current, { hmacKey: key }), auth.previousSecretKey ? [auth.previousSecretKey] : []);
}

export interface SecretRotation {
  /** Values re-sealed with the new key. */
  signingKeys: number;
  totpSecrets: number;
  /** The keyed-hash key: stored now, re-sealed, or already sealed with the new key. */
  hashingKey: 'stored' | 'resealed' | 'unchanged';
  /** Values that open with neither key (their sealing context): they still need the old key. */
  unopenable: string[];
  /** The new signing key (the old one's key material is in the old backups). */
  rotation: Rotation;
}

/**
 * `npm run admin -- rotate-secret`: re-seals every sealed value with the current key (AUTH_SECRET_KEY),
 * opening it with that key or AUTH_SECRET_KEY_PREVIOUS, then makes a new signing key. Each update
 * applies only if the row still holds the value read, so running servers never lose a write; running
 * it again re-seals nothing more.
 */
export async function rotateSecret(db: Kysely<Database>, auth: SecretKeys, options: { tokenLifetimeSeconds: number }): Promise<SecretRotation> {
  const current = currentKey(auth);
  const fresh = createSecretBox(current);
  const box = await loadSecretBox(auth, db);
  const unopenable: string[] = [];
  const opensWithNewKey = (sealed: string, context: string) => {
    try {
      fresh.open(sealed, context);
      return true;
    } catch {
      return false;
    }
  };
  /** The value sealed with the new key, or null when it already is (or opens with neither key: reported unless `ignored`). */
  const resealed = (sealed: string, context: string, ignored = false): string | null => {
    if (opensWithNewKey(sealed, context)) return null;
    try {
      return fresh.seal(box.open(sealed, context), context);
    } catch {
      if (!ignored) unopenable.push(context);
      return null;
    }
  };

  const hashing = await hashingKeyInForce(db, current, auth.previousSecretKey);
  let hashingKey: SecretRotation['hashingKey'] = 'unchanged';
  const sealedHashingKey = fresh.seal(hashing.key.toString('base64'), HASHING_KEY_CONTEXT);
  if (hashing.sealed === null) {
    await db
      .insertInto('auth_secret_box_keys')
      .values({ name: HASHING_KEY, sealed_key: sealedHashingKey, created_at: new Date().toISOString() })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
    hashingKey = 'stored';
  } else if (!opensWithNewKey(hashing.sealed, HASHING_KEY_CONTEXT)) {
    await db.updateTable('auth_secret_box_keys').set({ sealed_key: sealedHashingKey }).where('name', '=', HASHING_KEY).where('sealed_key', '=', hashing.sealed).execute();
    hashingKey = 'resealed';
  }

  let signingKeys = 0;
  for (const row of await db.selectFrom('auth_signing_keys').select(['kid', 'private_jwk', 'retired_at']).execute()) {
    // A key still in clear is sealed (and replaced) by the key ring itself; a retired key is never used again.
    if (!fresh.isSealed(row.private_jwk)) continue;
    const next = resealed(row.private_jwk, sealContext(row.kid), row.retired_at !== null);
    if (next === null) continue;
    const result = await db.updateTable('auth_signing_keys').set({ private_jwk: next }).where('kid', '=', row.kid).where('private_jwk', '=', row.private_jwk).executeTakeFirst();
    signingKeys += Number(result.numUpdatedRows);
  }

  let totpSecrets = 0;
  for (const row of await db.selectFrom('admin_mfa_factors').select(['id', 'secret']).execute()) {
    const next = resealed(row.secret, totpSecretContext(row.id));
    if (next === null) continue;
    const result = await db.updateTable('admin_mfa_factors').set({ secret: next }).where('id', '=', row.id).where('secret', '=', row.secret).executeTakeFirst();
    totpSecrets += Number(result.numUpdatedRows);
  }

  // The signing key's material is the same as in the old backups: a new one signs from now on, the
  // old one verifies until the tokens it signed have expired.
  const rotation = await rotateSigningKey(db, { secretBox: box, tokenLifetimeSeconds: options.tokenLifetimeSeconds });
  await recordAudit(db, {
    action: 'secret_rotated',
    actorEmail: null,
    actorId: null,
    ip: null,
    detail: { signing_keys: signingKeys, totp_secrets: totpSecrets, hashing_key: hashingKey, unopenable: unopenable.length, new_kid: rotation.kid, by: 'cli' },
  });
  return { signingKeys, totpSecrets, hashingKey, unopenable, rotation };
}
