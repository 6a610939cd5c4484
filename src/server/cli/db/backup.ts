import fs from 'node:fs';
import SQLite from 'better-sqlite3';
import { loadConfig } from '../../config.js';
import { createOwnerOnlyFile } from '../../db/database.js';
import { CliError, defineCommand } from '../program.js';
import { oneFile } from './arguments.js';
import { assertWritableDestination, formatSize, moveIntoPlace, removeQuietly, tempPathFor } from './files.js';

/** Pages per backup step: all of them, so the copy is one read snapshot (see below). */
const ALL_PAGES = 0x7fffffff;

export const backupCommand = defineCommand({
  synopsis: 'backup FILE [--force]',
  help: [
    'Copy the SQLite database to FILE while the site keeps running (SQLite online',
    'backup), then report its size and waitlist row count. An existing FILE is only',
    'replaced with --force. On PostgreSQL use pg_dump instead:',
    '  pg_dump "$DATABASE_URL" > FILE',
  ],
  options: { force: { type: 'boolean' } },
  async run({ positionals, options }, io) {
    const dest = oneFile(positionals, 'backup', io);
    const force = options.force === true;
    const config = loadConfig(io.env);
    if (config.database.dialect !== 'sqlite') {
      throw new CliError(
        'backup copies a SQLite database, and DATABASE_URL points to PostgreSQL. Use pg_dump instead:\n' +
          '  pg_dump "$DATABASE_URL" > FILE',
        2,
      );
    }
    const source = config.database.filename;
    if (source === ':memory:') throw new CliError('DATABASE_URL names an in-memory database; there is nothing to back up.');
    if (!fs.existsSync(source)) throw new CliError(`No database at ${source}.`);
    assertWritableDestination(dest, force);
    if (fs.existsSync(dest) && fs.realpathSync(dest) === fs.realpathSync(source)) throw new CliError('The backup cannot replace the database itself.');

    const tmp = tempPathFor(dest);
    try {
      // It holds e-mail addresses and password hashes: owner-only from the first byte (an empty
      // file is a valid target, and SQLite gives its journal the same permissions).
      createOwnerOnlyFile(tmp);
      // A connection of our own: the site keeps its connections and keeps serving. Copying every
      // page in one step reads one consistent snapshot; in WAL mode that blocks no writer, and a
      // multi-step copy would restart whenever the site wrote in between.
      const live = new SQLite(source, { fileMustExist: true });
      try {
        live.pragma('busy_timeout = 5000');
        await live.backup(tmp, { progress: () => ALL_PAGES });
      } finally {
        live.close();
      }

      // Check the copy, make it one self-contained file (no -wal), count the waitlist.
      let rows: number | null = null;
      const copy = new SQLite(tmp, { fileMustExist: true });
      try {
        copy.pragma('journal_mode = DELETE');
        const check = copy.pragma('quick_check', { simple: true });
        if (check !== 'ok') throw new CliError(`The backup failed its integrity check (${String(check)}); it was not kept.`);
        const hasWaitlist = copy.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'waitlist'").get();
        if (hasWaitlist) rows = Number((copy.prepare('SELECT count(*) AS n FROM waitlist').get() as { n: number }).n);
      } finally {
        copy.close();
      }
      // Whatever the umask did, the file that moves into place is owner-only.
      fs.chmodSync(tmp, 0o600);
      moveIntoPlace(tmp, dest, force);

      const size = fs.statSync(dest).size;
      io.stderr.write(
        `Backed up ${source} to ${dest}: ${formatSize(size)}, ` +
          (rows === null ? 'no waitlist table.' : `${rows} waitlist ${rows === 1 ? 'row' : 'rows'}.`) +
          '\n',
      );
    } finally {
      removeQuietly(tmp, `${tmp}-journal`, `${tmp}-wal`, `${tmp}-shm`);
    }
  },
});
