import { createHmac, hkdfSync } from 'node:crypto';
import { loadOrCreateKeyFile } from '../crypto/secret-box.js';

/**
 * Refresh tokens form one chain per session: the child of a token is an HMAC of the token itself,
 * keyed with a key derived from the auth secret key (AUTH_SECRET_KEY or its key file, never in the
 * database). Only hashes are stored, yet whoever presents a token that was rotated a moment ago (a
 * second tab refreshing at the same time) can be given the very token the first tab received,
 * instead of a branch or a revoked token. Without the secret key, a token (or a database dump) does
 * not tell its child.
 */
export interface RefreshChain {
  child(token: string): string;
}

export function refreshChain(auth: { secretKey: Buffer | null; secretKeyFile: string }): RefreshChain {
  let key: Buffer | null = null;
  const derived = () => {
    key ??= Buffer.from(hkdfSync('sha256', auth.secretKey ?? loadOrCreateKeyFile(auth.secretKeyFile), Buffer.alloc(0), 'admin refresh token chain v1', 32));
    return key;
  };
  return {
    child: (token) => createHmac('sha256', derived()).update(token, 'utf8').digest('base64url'),
  };
}
