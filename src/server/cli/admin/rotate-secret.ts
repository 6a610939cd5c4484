import { loadSecretBox, rotateSecret } from '../../auth/secret-rotation.js';
import { resealEndpointSecrets } from '../../webhooks/endpoints.js';
import { loadConfig } from '../../config.js';
import { withDatabase } from '../database.js';
import { CliError, defineCommand, UsageError } from '../program.js';

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export const rotateSecretCommand = defineCommand({
  synopsis: 'rotate-secret',
  help: [
    'Move every sealed value (signing keys, TOTP secrets, the hashing key) to a new AUTH_SECRET_KEY.',
    'First give every server the new key as AUTH_SECRET_KEY and the old one as AUTH_SECRET_KEY_PREVIOUS',
    '(they seal with the new key and open with either), then run this with the same two settings: it',
    're-seals everything with the new key and makes a new signing key. Then remove',
    'AUTH_SECRET_KEY_PREVIOUS everywhere and destroy the old key.',
  ],
  async run({ positionals }, io) {
    if (positionals.length > 0) throw new UsageError('"rotate-secret" takes no arguments.');
    const config = loadConfig(io.env);
    const previous = config.auth.previousSecretKey;
    if (!previous) {
      throw new CliError('Set AUTH_SECRET_KEY to the new key and AUTH_SECRET_KEY_PREVIOUS to the old one (on the servers too, and restart them), then run this again. Nothing was changed.');
    }
    if (config.auth.secretKey?.equals(previous)) throw new CliError('AUTH_SECRET_KEY and AUTH_SECRET_KEY_PREVIOUS are the same key. Nothing was changed.');
    const { result, webhooks } = await withDatabase(io, async (db) => {
      const rotated = await rotateSecret(db, config.auth, { tokenLifetimeSeconds: config.auth.jwtExpirySeconds });
      // The webhook endpoints' secrets are sealed with the same box (src/server/webhooks/endpoints.ts).
      return { result: rotated, webhooks: await resealEndpointSecrets(db, await loadSecretBox(config.auth, db)) };
    });
    result.unopenable.push(...webhooks.unopenable);
    const hashing = { stored: 'stored, sealed with the new key', resealed: 're-sealed with the new key', unchanged: 'already sealed with the new key' }[result.hashingKey];
    io.stdout.write(`Re-sealed ${plural(result.signingKeys, 'signing key')} and ${plural(result.totpSecrets, 'TOTP secret')} with the new AUTH_SECRET_KEY; the hashing key is ${hashing}.\n`);
    io.stdout.write(`Re-sealed ${plural(webhooks.resealed, 'webhook secret')} with the new AUTH_SECRET_KEY.\n`);
    io.stdout.write(`New signing key ${result.rotation.kid} (generation ${result.rotation.generation}) signs from now on; the previous ones verify their tokens until they expire.\n`);
    if (result.unopenable.length > 0) {
      io.stderr.write(`${plural(result.unopenable.length, 'sealed value')} open with neither key: ${result.unopenable.join(', ')}.\nKeep AUTH_SECRET_KEY_PREVIOUS until they are dealt with.\n`);
      return 1;
    }
    io.stdout.write('Every sealed value opens with the new key alone: remove AUTH_SECRET_KEY_PREVIOUS from every server, restart them, and destroy the old key.\n');
    io.stdout.write('The TOTP secrets themselves are unchanged: if the old key may have leaked with a backup, have the admins enrol their authenticator again.\n');
  },
});
