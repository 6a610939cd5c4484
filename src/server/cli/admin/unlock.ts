import { recordAudit } from '../../audit/audit-log.js';
import { findAdminId } from '../../auth/admins.js';
import { clearFailures } from '../../auth/factors-repository.js';
import { loadConfig } from '../../config.js';
import { accountLimitKeys, databaseStore, redisStore, type RateLimitStore } from '../../rate-limit/index.js';
import { withDatabase } from '../database.js';
import { defineCommand } from '../program.js';
import { oneEmail } from './arguments.js';

/**
 * Forgets every sign-in counter of the account (lower-cased e-mail) in each store: its
 * account-wide failures (the slowdown) and its per-client counters (the 429s). Per-IP counters,
 * which are not the account's, stay.
 */
export async function unlockAccount(stores: readonly RateLimitStore[], email: string): Promise<void> {
  const { prefix } = accountLimitKeys(email);
  for (const store of stores) await store.resetPrefix(prefix);
}

export const unlockCommand = defineCommand({
  synopsis: 'unlock EMAIL',
  help: [
    'Clear the failed sign-in counters of an address (the per-client blocks and the account-wide',
    'slowdown), in the database and in Redis when REDIS_URL is set, and its wrong two-factor',
    'codes of the last hour (which lock code verification after 10).',
  ],
  async run({ positionals }, io) {
    const email = oneEmail(positionals, 'unlock');
    const config = loadConfig(io.env);
    const { isAdmin, mfaFailures } = await withDatabase(io, async (db) => {
      // The server counts sign-in attempts in the database, or in Redis with the database as its
      // fallback (rate-limit/index.ts): clear both.
      const stores: RateLimitStore[] = [databaseStore(db)];
      if (config.redisUrl) stores.push(await redisStore(config.redisUrl));
      try {
        await unlockAccount(stores, email);
      } finally {
        await Promise.all(stores.map((store) => store.close()));
      }
      const id = await findAdminId(db, email);
      // The wrong two-factor codes of the last hour too, which lock verification (auth/mfa.ts).
      const cleared = id === undefined ? 0 : await clearFailures(db, id);
      await recordAudit(db, { action: 'unlock', actorEmail: email, actorId: id ?? null, ip: null, detail: { by: 'cli', ...(cleared > 0 ? { mfa_failures_cleared: cleared } : {}) } });
      return { isAdmin: id !== undefined, mfaFailures: cleared };
    });
    const where = config.redisUrl ? 'the database and Redis' : 'the database';
    io.stdout.write(`Sign-in counters cleared for ${email} in ${where}.${isAdmin ? '' : ' (No admin has this address.)'}\n`);
    if (mfaFailures > 0) {
      io.stdout.write(`${mfaFailures} wrong two-factor code${mfaFailures === 1 ? '' : 's'} forgotten: code verification is open again.\n`);
    }
  },
});
