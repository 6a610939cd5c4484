import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Encryption at rest for the auth service's secrets (the JWT signing keys, the TOTP secrets): a
 * database dump or backup alone can neither mint tokens nor compute codes, because the key that
 * opens them is never stored in the database. It comes from AUTH_SECRET_KEY, or from a key file
 * generated on first start with owner-only permissions (AUTH_SECRET_KEY_FILE).
 *
 * AES-256-GCM with a random 96-bit nonce per value; `context` (for example `jwk:<kid>`) is bound
 * as associated data, so a sealed value copied into another row does not open there.
 */
export interface SecretBox {
  seal(plaintext: string, context: string): string;
  /** Throws when the value was not sealed with this key and context (or was altered). */
  open(sealed: string, context: string): string;
  /** True when `value` is in the sealed format (values written before encryption are not). */
  isSealed(value: string): boolean;
  /**
   * A keyed hash (HMAC-SHA256, hex) of `text` for `context`, with a key derived from the secret key:
   * lets a record say "this address" without holding it, and cannot be recomputed from a dump alone.
   */
  hmac(text: string, context: string): string;
}

const FORMAT = 'sealed:v1';
const KEY_BYTES = 32;

export function createSecretBox(key: Buffer, options: { hmacKey?: Buffer } = {}): SecretBox {
  if (key.length !== KEY_BYTES) throw new Error(`the secret key must be ${KEY_BYTES} bytes, got ${key.length}`);
  // A separate key for hashing, so no value is ever both encrypted and hashed under one key; kept
  // across a change of the secret key (options.hmacKey, auth/secret-rotation.ts).
  const hmacKey = options.hmacKey ?? hmacKeyOf(key);
  return {
    seal(plaintext, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [FORMAT, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join(':');
    },
    open(sealed, context) {
      const parts = sealed.split(':');
      if (parts.length !== 5 || `${parts[0]}:${parts[1]}` !== FORMAT) throw new Error('not a sealed value');
      const [, , iv, tag, body] = parts as [string, string, string, string, string];
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    },
    isSealed(value) {
      return value.startsWith(`${FORMAT}:`);
    },
    hmac(text, context) {
      // The length prefix keeps (context, text) pairs unambiguous.
      return createHmac('sha256', hmacKey).update(`${Buffer.byteLength(context)}:${context}:${text}`, 'utf8').digest('hex');
    },
  };
}

/** A key given in the environment: 32 bytes as base64 (44 characters) or hex (64 characters). */
export function parseSecretKey(text: string): Buffer | null {
  const t = text.trim();
  if (/^[0-9a-f]{64}$/i.test(t)) return Buffer.from(t, 'hex');
  const b = Buffer.from(t, 'base64');
  return b.length === KEY_BYTES && /^[A-Za-z0-9+/_-]{43}=?$/.test(t) ? b : null;
}

/**
 * The key file's key, creating the file (mode 0600, in a directory created 0700) when it does not
 * exist yet. Concurrent first starts agree: the key is written to a private temporary file and
 * hard-linked into place, which fails if another process got there first, so nobody ever reads a
 * half-written key. An existing file's permissions are never widened.
 */
export function loadOrCreateKeyFile(file: string): Buffer {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  if (!fs.existsSync(file)) {
    const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    fs.writeFileSync(temporary, `${randomBytes(KEY_BYTES).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
    try {
      fs.linkSync(temporary, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      fs.rmSync(temporary, { force: true });
    }
  }
  const key = parseSecretKey(fs.readFileSync(file, 'utf8'));
  if (!key) throw new Error(`${file} does not hold a 32-byte key (base64 or hex)`);
  return key;
}

/**
 * Warnings for files that hold secrets or personal data (the key file, the SQLite database) and
 * that other users of the machine can read or write. Existing files are not changed: tightening
 * them silently could break whoever was given access on purpose, so the operator decides.
 */
export function looseFileWarnings(files: readonly string[]): string[] {
  const warnings: string[] = [];
  for (const file of files) {
    let mode: number;
    try {
      mode = fs.statSync(file).mode;
    } catch {
      continue; // not there (yet)
    }
    if ((mode & 0o077) !== 0) {
      warnings.push(`${file} is readable or writable by other users (mode ${(mode & 0o777).toString(8)}); restrict it with: chmod 600 "${file}"`);
    }
  }
  return warnings;
}

/** The keyed-hash key derived from a secret key (what createSecretBox hashes with, unless given another). */
export function hmacKeyOf(key: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), 'waitlist hmac v1', KEY_BYTES));
}

/**
 * `box`, also opening values sealed with the `previous` keys (AUTH_SECRET_KEY_PREVIOUS, while
 * `npm run admin -- rotate-secret` re-seals them); sealing and hashing stay `box`'s.
 */
export function withPreviousKeys(box: SecretBox, previous: readonly Buffer[]): SecretBox {
  if (previous.length === 0) return box;
  const older = previous.map((key) => createSecretBox(key));
  return {
    ...box,
    open(sealed, context) {
      try {
        return box.open(sealed, context);
      } catch (err) {
        for (const other of older) {
          try {
            return other.open(sealed, context);
          } catch {
            // not this one either
          }
        }
        throw err;
      }
    },
  };
}
