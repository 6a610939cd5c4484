/**
 * Records CLI: `npm run records -- <command>` (`npm run records -- help` lists the commands).
 * Uses the same configuration as the server (DATABASE_URL, RECORDS_RETENTION_YEARS). The skeleton,
 * with the exit codes, is program.ts.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../config.js';
import { buildRecordsBundle } from '../records/bundle.js';
import { recordsBundleQuerySchema } from '../../shared/admin/records-api.js';
import { withDatabase } from './database.js';
import { CliError, defineCommand, runAsScript, runProgram, UsageError, type CliIo, type CliProgram } from './program.js';

export const exportCommand = defineCommand({
  synopsis: 'export --from DAY --to DAY --out FILE',
  help: [
    'Write the examiner\'s bundle (a zip) of every text version in use from DAY to DAY',
    '(UTC days as YYYY-MM-DD, both included): each text as served, a manifest, SHA-256',
    'checksums and a README. The uses a running server counted in the last minute may',
    'not be written yet; the admin\'s download (Records area) writes them first.',
  ],
  options: { from: { type: 'string' }, to: { type: 'string' }, out: { type: 'string' } },
  async run({ positionals, options }, io) {
    if (positionals.length > 0) throw new UsageError(`"export" takes no arguments besides its options (got "${positionals[0]}").`);
    if (!options.out) throw new UsageError('"export" needs --out FILE.');
    const query = recordsBundleQuerySchema.safeParse({ from: options.from, to: options.to });
    if (!query.success) throw new UsageError('"export" needs --from DAY and --to DAY as YYYY-MM-DD, the first not after the second.');
    const out = path.resolve(io.cwd, options.out);
    const config = loadConfig(io.env);
    const { zip, manifest } = await withDatabase(io, (db) => buildRecordsBundle(db, query.data, { retentionYears: config.records.retentionYears }));
    try {
      // Never over an existing file: a bundle handed over is not replaced by accident.
      await fs.writeFile(out, zip, { flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new CliError(`${out} exists already; choose another --out.`);
      throw err;
    }
    io.stderr.write(`Wrote ${out}: ${manifest.versions.length} version(s) in use from ${query.data.from} to ${query.data.to}, ${zip.length} bytes.\n`);
  },
});

export const recordsProgram: CliProgram = {
  name: 'records',
  commands: [exportCommand],
  footer: `  help  Show this help.

Exit codes: 0 ok, 1 failed, 2 bad usage, 78 bad configuration.
`,
};

/** The whole CLI with injectable streams (tests call it directly); resolves to the exit code. */
export function run(argv: readonly string[], io: Partial<CliIo> = {}): Promise<number> {
  return runProgram(recordsProgram, argv, io);
}

runAsScript(recordsProgram, import.meta.url);
