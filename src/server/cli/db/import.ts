import { randomUUID } from 'node:crypto';
import { CsvHeaderError, parseWaitlistCsv, type ParsedWaitlistCsv } from '../../../shared/waitlist/csv.js';
import type { WaitlistEntry } from '../../../shared/waitlist/entry.js';
import { insertWaitlistEntriesSkippingDuplicates } from '../../waitlist/repository.js';
import { withDatabase } from '../database.js';
import { CliError, defineCommand } from '../program.js';
import { oneFile, timeZoneOf, timeZoneOption } from './arguments.js';
import { readUtf8File } from './files.js';

function plural(n: number, one: string, many: string): string {
  return n === 1 ? one : many;
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
    'E-mail addresses already on the waitlist (in any case) or repeated in the file are',
    'skipped and counted. Everything is written in one transaction: a bad line (invalid',
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
      let inserted: number;
      try {
        // One transaction: any database error rolls back every row of this import.
        inserted = await db.transaction().execute((trx) => insertWaitlistEntriesSkippingDuplicates(trx, entries));
      } catch (err) {
        throw new CliError(`The import failed and was rolled back; nothing was imported. ${err instanceof Error ? err.message : String(err)}`);
      }
      const duplicates = parsed.duplicates + (entries.length - inserted);
      io.stderr.write(`Imported ${inserted}, skipped ${duplicates} duplicates, ${badCount} bad lines\n`);
    });
  },
});
