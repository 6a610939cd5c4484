/**
 * Database CLI: `npm run db -- <command>` (`npm run db -- help` lists the commands).
 * Uses the same configuration as the server (DATABASE_URL) and runs migrations before export and
 * import. Standard output carries only data (the CSV, or the help); every message goes to standard
 * error. The skeleton, with the exit codes, is program.ts.
 */
import { backupCommand } from './db/backup.js';
import { exportCommand } from './db/export.js';
import { importCommand } from './db/import.js';
import { runAsScript, runProgram, type CliIo, type CliProgram } from './program.js';

export const dbProgram: CliProgram = {
  name: 'db',
  commands: [exportCommand, importCommand, backupCommand],
  footer: `  help  Show this help.

Standard output carries only data; messages go to standard error.
Exit codes: 0 ok, 1 failed, 2 bad usage, 78 bad configuration.
`,
};

/** The whole CLI with injectable streams (tests call it directly); resolves to the exit code. */
export function run(argv: readonly string[], io: Partial<CliIo> = {}): Promise<number> {
  return runProgram(dbProgram, argv, io);
}

runAsScript(dbProgram, import.meta.url);
