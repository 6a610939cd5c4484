import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import type { Kysely } from 'kysely';
import type { WaitlistEntry } from '../../../shared/waitlist/entry.js';
import { sealContext } from '../../auth/keys.js';
import { loadSecretBox, SecretKeyError } from '../../auth/secret-rotation.js';
import type { SecretBox } from '../../crypto/secret-box.js';
import { loadConfig } from '../../config.js';
import { CsvHeaderError, parseWaitlistCsv, type ParsedWaitlistCsv } from '../../csv/read-waitlist.js';
import type { Database } from '../../db/schema.js';
import { insertWaitlistEntriesSkippingDuplicates } from '../../signup/repository.js';
import { countSuppressions, recordsUnderAnotherKey, suppressedHashes, suppressionHash, type SuppressionBox } from '../../consent/suppression.js';
import { withDatabase } from '../database.js';
import { CliError, defineCommand, type CliIo } from '../program.js';
import { oneFile, timeZoneOf, timeZoneOption } from './arguments.js';
import { readUtf8File } from './files.js';

function plural(n: number, one: string, many: string): string {
  return n === 1 ? one : many;
}

/**
 * The server's secret key, which keys the suppression hashes; never a new one (a new key would
 * match none of them and let erased addresses back in).
 */
async function serverSecretBox(io: CliIo, db: Kysely<Database>, suppressed: number): Promise<SuppressionBox> {
  const { auth } = loadConfig(io.env);
  // The hashing key in force, which outlives a change of AUTH_SECRET_KEY (auth/secret-rotation.ts).
  if (auth.secretKey || fs.existsSync(auth.secretKeyFile)) {
    let box: SecretBox;
    try {
      box = await loadSecretBox(auth, db);
    } catch (err) {
      if (err instanceof SecretKeyError) throw new CliError(`${anotherKey(suppressed)} (${err.message}); nothing was imported.`);
      throw err;
    }
    // Each record carries a check value of the key that made it: any other key would match none of
    // them. Records from before the check value have none; the signing keys, sealed with the same
    // secret key, tell for them.
    if ((await recordsUnderAnotherKey(db, box)) > 0 || (await opensSigningKeys(db, box)) === false) {
      throw new CliError(`${anotherKey(suppressed)}; nothing was imported.`);
    }
    return box;
  }
  throw new CliError(
    `The waitlist keeps ${suppressed} erased ${plural(suppressed, 'address', 'addresses')} out as hashes keyed by the server's secret key, ` +
      `and there is no key here (AUTH_SECRET_KEY is unset and ${auth.secretKeyFile} does not exist). ` +
      'Run the import with the server\'s AUTH_SECRET_KEY or AUTH_SECRET_KEY_FILE; nothing was imported.',
  );
}

/** Whether the server's sealed signing keys open with `box` (they are sealed with its secret key); null when there is none. */
async function opensSigningKeys(db: Kysely<Database>, box: SecretBox): Promise<boolean | null> {
  const sealed = (await db.selectFrom('auth_signing_keys').select(['kid', 'private_jwk']).execute()).filter((row) => box.isSealed(row.private_jwk));
  if (sealed.length === 0) return null;
  return sealed.some((row) => {
    try {
      box.open(row.private_jwk, sealContext(row.kid));
      return true;
    } catch {
      return false;
    }
  });
}

function anotherKey(suppressed: number): string {
  return (
    `The waitlist keeps ${suppressed} erased ${plural(suppressed, 'address', 'addresses')} out as hashes keyed by the server's secret key, ` +
    'and this run has another key (AUTH_SECRET_KEY or the key file differs from the server\'s): it would let them back in. ' +
    "Run the import with the server's AUTH_SECRET_KEY or AUTH_SECRET_KEY_FILE"
  );
}

/** The entries whose address is not on the suppression list (erased at the person's request), and how many were. */
async function withoutSuppressed(db: Kysely<Database>, io: CliIo, entries: WaitlistEntry[]): Promise<{ kept: WaitlistEntry[]; suppressed: number }> {
  const listed = await countSuppressions(db);
  if (listed === 0 || entries.length === 0) return { kept: entries, suppressed: 0 };
  const box = await serverSecretBox(io, db, listed);
  const hashes = entries.map((e) => suppressionHash(box, e.email));
  const found = await suppressedHashes(db, hashes);
  const kept = entries.filter((_, i) => !found.has(hashes[i]!));
  return { kept, suppressed: entries.length - kept.length };
}

export const importCommand = defineCommand({
  synopsis: 'import FILE [--time-zone ZONE] [--skip-bad]',
  help: [
    'Add the entries of a CSV written by our export or by the original product\'s',
    'export. Header row required (Email required; Date Joined, IP Address, Location',
    'optional; any order, any case). Date Joined as "Nov 22, 2026, 06:04 AM" in the',
    'time zone of the exporting browser (UTC unless --time-zone) or ISO-8601.',
    'IP Address "N/A" or empty means unknown. Location "Unknown" or empty means unknown;',
    'otherwise it is split on commas: 3+ parts = city, region (the middle parts),',
    'country; 2 parts = city, country; 1 part = country.',
    'The consent columns of `export --consent` (Status, Consent Version, Confirmed At,',
    'Confirmed IP, Invited At, Unsubscribed At) are read when present; without them an',
    'entry is "joined" with no consent record. The attribution columns of `export',
    '--attribution` (UTM Source … UTM Content, Referrer, Landing Path) are read when',
    'present, cleaned like a signup\'s (a refused value is left empty); Source is',
    'derived again from UTM Source and Referrer.',
    'E-mail addresses already on the waitlist (in any case) or repeated in the file are',
    'skipped and counted, and so are the addresses of people who erased their entry',
    '(kept out for good; only they may join again, through a link e-mailed to them).',
    'It needs the server\'s secret key then, and refuses a run with another one. Everything is',
    'written in one transaction: a bad line (invalid',
    'e-mail, unreadable date, wrong number of columns) is reported with its line number',
    'and nothing is imported, unless --skip-bad imports the other lines.',
    'The file is read into memory (fine for hundreds of thousands of lines).',
  ],
  options: { ...timeZoneOption, 'skip-bad': { type: 'boolean' } },
  async run({ positionals, options }, io) {
    const file = oneFile(positionals, 'import', io);
    const timeZone = timeZoneOf(options);
    const text = readUtf8File(file);
    let parsed: ParsedWaitlistCsv;
    try {
      parsed = parseWaitlistCsv(text, { timeZone });
    } catch (err) {
      if (err instanceof CsvHeaderError) throw new CliError(`${file}: ${err.message}`);
      throw err;
    }
    for (const warning of parsed.warnings) io.stderr.write(`Warning: ${warning}\n`);
    for (const bad of parsed.bad) io.stderr.write(`Line ${bad.line}: ${bad.reason}\n`);
    const badCount = parsed.bad.length;
    const good = parsed.rows.length;
    if (badCount > 0 && !options['skip-bad']) {
      io.stderr.write(
        `Nothing imported: ${badCount} bad ${plural(badCount, 'line', 'lines')}. Fix ${plural(badCount, 'it', 'them')}, ` +
          `or run again with --skip-bad to import the other ${good} ${plural(good, 'entry', 'entries')}.\n`,
      );
      return 1;
    }

    const entries: WaitlistEntry[] = parsed.rows.map(({ line: _line, ...row }) => ({ id: randomUUID(), ...row }));
    await withDatabase(io, async (db) => {
      let result: { inserted: number; kept: number; suppressed: number };
      try {
        // One transaction: any database error rolls back every row of this import.
        result = await db.transaction().execute(async (trx) => {
          const { kept, suppressed } = await withoutSuppressed(trx, io, entries);
          return { inserted: await insertWaitlistEntriesSkippingDuplicates(trx, kept), kept: kept.length, suppressed };
        });
      } catch (err) {
        if (err instanceof CliError) throw err;
        throw new CliError(`The import failed and was rolled back; nothing was imported. ${err instanceof Error ? err.message : String(err)}`);
      }
      const duplicates = parsed.duplicates + (result.kept - result.inserted);
      io.stderr.write(`Imported ${result.inserted}, skipped ${duplicates} duplicates, ${badCount} bad lines\n`);
      if (result.suppressed > 0) {
        io.stderr.write(
          `${result.suppressed} ${plural(result.suppressed, 'address', 'addresses')} skipped: erased at the person's request (on the suppression list)\n`,
        );
      }
    });
  },
});
