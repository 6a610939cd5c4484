import { rotateSigningKey, SecretKeyMismatchError } from '../../auth/keys.js';
import { loadSecretBox } from '../../auth/secret-rotation.js';
import { loadConfig } from '../../config.js';
import { withDatabase } from '../database.js';
import { CliError, defineCommand, UsageError } from '../program.js';
import { shortTime } from './table.js';

export const rotateKeyCommand = defineCommand({
  synopsis: 'rotate-key',
  help: [
    'Make a new JWT signing key. New access tokens are signed with it (running',
    'servers switch within 5 minutes); tokens signed by the previous key stay valid',
    'until they expire, then that key is retired. Needs the same AUTH_SECRET_KEY',
    '(or key file) as the server.',
  ],
  async run({ positionals }, io) {
    if (positionals.length > 0) throw new UsageError('"rotate-key" takes no arguments.');
    const config = loadConfig(io.env);
    const rotation = await withDatabase(io, async (db) =>
      rotateSigningKey(db, {
        secretBox: await loadSecretBox(config.auth, db),
        tokenLifetimeSeconds: config.auth.jwtExpirySeconds,
        warn: (m) => io.stderr.write(`Warning: ${m}\n`),
      }),
    ).catch((err: unknown) => {
      if (err instanceof SecretKeyMismatchError) throw new CliError(`${err.message}. Nothing was changed.`);
      throw err;
    });
    io.stdout.write(`New signing key ${rotation.kid} (generation ${rotation.generation}) signs from now on.\n`);
    for (const key of rotation.previous) {
      io.stdout.write(`Key ${key.kid} keeps verifying the tokens it signed until ${shortTime(key.retiresAfter)}, then it is retired.\n`);
    }
  },
});
