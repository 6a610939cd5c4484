import fs from 'node:fs';
import path from 'node:path';
import { waitlistCsvChunks } from '../../../shared/waitlist/csv.js';
import { iterateAllWaitlist } from '../../db/waitlist-keyset.js';
import { withDatabase } from '../database.js';
import { CliError, defineCommand, UsageError } from '../program.js';
import { timeZoneOf, timeZoneOption } from './arguments.js';
import { assertWritableDestination, moveIntoPlace, removeQuietly, streamWriter, tempPathFor } from './files.js';

export const exportCommand = defineCommand({
  synopsis: 'export [--consent] [--attribution] [--time-zone ZONE] [--output|-o FILE [--force]]',
  help: [
    'Write the whole waitlist as CSV, newest first, in the admin export\'s format',
    '(Email, Date Joined, IP Address, Location). Date Joined is in UTC unless',
    '--time-zone names an IANA zone such as Europe/Berlin. --consent adds each',
    'entry\'s status and consent record: Status, Consent Version, Confirmed At,',
    'Confirmed IP, Invited At, Unsubscribed At (times in ISO-8601 UTC). --attribution',
    'adds where each signup came from: Source, UTM Source, UTM Medium, UTM Campaign,',
    'UTM Term, UTM Content, Referrer, Landing Path (after the consent columns when',
    'both are given). import reads them back. Writes to standard output,',
    'or to FILE with --output (an existing FILE only with --force). When redirecting,',
    'silence npm or its banner lands in the file:',
    '  npm run --silent db -- export > waitlist.csv',
  ],
  options: {
    ...timeZoneOption,
    consent: { type: 'boolean' },
    attribution: { type: 'boolean' },
    output: { type: 'string', short: 'o' },
    force: { type: 'boolean' },
  },
  async run({ positionals, options }, io) {
    if (positionals.length > 0) throw new UsageError(`"export" takes no FILE; use --output FILE or redirect standard output.`);
    const timeZone = timeZoneOf(options);
    const force = options.force === true;
    if (force && options.output === undefined) throw new UsageError('--force only applies with --output FILE.');
    const output = options.output === undefined ? null : path.resolve(io.cwd, options.output);
    if (output) assertWritableDestination(output, force);

    await withDatabase(io, async (db) => {
      let rows = 0;
      const columns = { consent: options.consent === true, attribution: options.attribution === true };
      const chunks = waitlistCsvChunks(iterateAllWaitlist(db), timeZone, (n) => (rows += n), columns);
      if (!output) {
        const write = streamWriter(io.stdout);
        try {
          for await (const chunk of chunks) await write(chunk);
        } catch (err) {
          throw new CliError(`Could not write to standard output (${(err as Error).message}); the export is incomplete.`);
        }
      } else {
        // Written beside the target and moved into place, so FILE is never a half-written export.
        const tmp = tempPathFor(output);
        try {
          const file = await fs.promises.open(tmp, 'wx', 0o600);
          try {
            for await (const chunk of chunks) await file.write(chunk);
            await file.sync();
          } finally {
            await file.close();
          }
          moveIntoPlace(tmp, output, force);
        } finally {
          removeQuietly(tmp);
        }
      }
      const extra = [columns.consent && 'consent', columns.attribution && 'attribution'].filter(Boolean).join(' and ');
      const withColumns = extra ? `, with the ${extra} columns` : '';
      io.stderr.write(`Exported ${rows} waitlist ${rows === 1 ? 'entry' : 'entries'}${output ? ` to ${output}` : ''} (Date Joined in ${timeZone}${withColumns}).\n`);
    });
  },
});
