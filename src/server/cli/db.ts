/**
 * Database CLI: `npm run db -- <command>`.
 *
 *   export [--time-zone ZONE] [--output FILE [--force]]   the waitlist as CSV, newest first
 *   import FILE [--time-zone ZONE] [--skip-bad]           add entries from a waitlist CSV
 *   backup FILE [--force]                                 online backup of the SQLite database
 *
 * Uses the same configuration as the server (DATABASE_URL) and runs migrations before export and
 * import. Standard output carries only data (the CSV, or this help); every message goes to
 * standard error. Exit codes: 0 ok, 1 failed (bad lines, file exists, database error…),
 * 2 bad usage (or backup on PostgreSQL), 78 bad config.
 *
 * `run(argv, io)` is the whole CLI with injectable streams, environment and working directory
 * (tests call it directly); the module only runs itself when started as a script.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import SQLite from 'better-sqlite3';
import { waitlistCsvChunks } from '../admin/csv.js';
import { runCli } from './run-cli.js';
import { CONFIG_ERROR_EXIT_CODE, ConfigError, loadConfig } from '../config.js';
import { openDatabase, type DatabaseHandle } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import { iterateAllWaitlist } from '../waitlist/admin-repository.js';
import { CsvHeaderError, parseWaitlistCsv } from '../waitlist/csv-import.js';
import { insertWaitlistEntriesSkippingDuplicates, type NewWaitlistEntry } from '../waitlist/repository.js';
import { isKnownTimeZone } from '../../shared/waitlist/display.js';

const USAGE = `Usage: npm run db -- <command>

Commands:
  export [--time-zone ZONE] [--output|-o FILE [--force]]
        Write the whole waitlist as CSV, newest first, in the admin export's format
        (Email, Date Joined, IP Address, Location). Date Joined is in UTC unless
        --time-zone names an IANA zone such as Europe/Berlin. Writes to standard output,
        or to FILE with --output (an existing FILE only with --force). When redirecting,
        silence npm or its banner lands in the file:
          npm run --silent db -- export > waitlist.csv

  import FILE [--time-zone ZONE] [--skip-bad]
        Add the entries of a CSV written by our export or by the original product's
        export. Header row required (Email required; Date Joined, IP Address, Location
        optional; any order, any case). Date Joined as "Nov 22, 2026, 06:04 AM" in the
        time zone of the exporting browser (UTC unless --time-zone) or ISO-8601.
        IP Address "N/A" or empty means unknown. Location "Unknown" or empty means unknown;
        otherwise it is split on commas: 3+ parts = city, region (the middle parts),
        country; 2 parts = city, country; 1 part = country.
        E-mail addresses already on the waitlist (in any case) or repeated in the file are
        skipped and counted. Everything is written in one transaction: a bad line (invalid
        e-mail, unreadable date, wrong number of columns) is reported with its line number
        and nothing is imported, unless --skip-bad imports the other lines.
        The file is read into memory (fine for hundreds of thousands of lines).

  backup FILE [--force]
        Copy the SQLite database to FILE while the site keeps running (SQLite online
        backup), then report its size and waitlist row count. An existing FILE is only
        replaced with --force. On PostgreSQL use pg_dump instead:
          pg_dump "$DATABASE_URL" > FILE

  help  Show this help.

Standard output carries only data; messages go to standard error.
Exit codes: 0 ok, 1 failed, 2 bad usage, 78 bad configuration.
`;

export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  /** Relative FILE arguments resolve against this. */
  cwd: string;
}

class UsageError extends Error {}
class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** `npm run` starts scripts in the package root; INIT_CWD is where the user typed the command. */
function defaultCwd(env: NodeJS.ProcessEnv): string {
  return env.npm_lifecycle_event === 'db' && env.INIT_CWD ? env.INIT_CWD : process.cwd();
}

// ---------------------------------------------------------------------------------------------
// Arguments

interface ParsedArgs {
  positionals: string[];
  values: Map<string, string>;
  flags: Set<string>;
}

/** `--name value`, `--name=value` and `--flag`; anything else starting with `-` is a usage error. */
function parseArgs(args: string[], spec: { values?: string[]; flags?: string[] }): ParsedArgs {
  const parsed: ParsedArgs = { positionals: [], values: new Map(), flags: new Set() };
  const valueNames = new Set(spec.values ?? []);
  const flagNames = new Set(spec.flags ?? []);
  for (let i = 0; i < args.length; i++) {
    let arg = args[i] ?? '';
    if (arg === '-o' && valueNames.has('output')) arg = '--output';
    if (!arg.startsWith('--') || arg === '--') {
      if (arg === '--') {
        parsed.positionals.push(...args.slice(i + 1));
        break;
      }
      if (arg.startsWith('-') && arg !== '-') throw new UsageError(`Unknown option "${arg}".`);
      parsed.positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    if (valueNames.has(name)) {
      const value = eq === -1 ? args[++i] : arg.slice(eq + 1);
      if (value === undefined || value === '') throw new UsageError(`--${name} needs a value.`);
      parsed.values.set(name, value);
    } else if (flagNames.has(name) && eq === -1) {
      parsed.flags.add(name);
    } else {
      throw new UsageError(`Unknown option "${arg}".`);
    }
  }
  return parsed;
}

function timeZoneOption(args: ParsedArgs): string {
  const zone = args.values.get('time-zone') ?? 'UTC';
  if (!isKnownTimeZone(zone)) throw new UsageError(`Unknown time zone "${zone}". Use an IANA name such as Europe/Berlin or America/New_York.`);
  return zone;
}

function oneFile(args: ParsedArgs, command: string, io: CliIo): string {
  if (args.positionals.length !== 1 || !args.positionals[0]) throw new UsageError(`"${command}" needs exactly one FILE.`);
  return path.resolve(io.cwd, args.positionals[0]);
}

// ---------------------------------------------------------------------------------------------
// Files

/** A sibling of `dest` to write first and move into place when complete. */
function tempPathFor(dest: string): string {
  return path.join(path.dirname(dest), `.${path.basename(dest)}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
}

function removeQuietly(...files: string[]): void {
  for (const file of files) fs.rmSync(file, { force: true });
}

function assertWritableDestination(dest: string, force: boolean): void {
  if (!fs.existsSync(path.dirname(dest))) throw new CliError(`The directory ${path.dirname(dest)} does not exist.`);
  if (fs.existsSync(dest)) {
    if (!force) throw new CliError(`${dest} already exists. Choose another name, or pass --force to replace it.`);
    if (fs.statSync(dest).isDirectory()) throw new CliError(`${dest} is a directory.`);
  }
}

/** Moves a finished temp file to `dest`, never replacing an existing file unless `force`. */
function moveIntoPlace(tmp: string, dest: string, force: boolean): void {
  if (force) {
    fs.renameSync(tmp, dest);
    return;
  }
  try {
    // link() fails when dest exists, so a file created meanwhile is never replaced.
    fs.linkSync(tmp, dest);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new CliError(`${dest} already exists. Choose another name, or pass --force to replace it.`);
    }
    // A file system without hard links.
    if (fs.existsSync(dest)) throw new CliError(`${dest} already exists. Choose another name, or pass --force to replace it.`);
    fs.renameSync(tmp, dest);
    return;
  }
  fs.unlinkSync(tmp);
}

function formatSize(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  const human = unit === 0 ? `${bytes} bytes` : `${value.toFixed(1)} ${units[unit]}`;
  return unit === 0 ? human : `${human} (${bytes.toLocaleString('en-US')} bytes)`;
}

/** Writes to a stream honouring back-pressure; rejects once the stream failed (e.g. EPIPE). */
function streamWriter(stream: NodeJS.WritableStream): (chunk: string) => Promise<void> {
  let failure: Error | null = null;
  stream.on('error', (err: Error) => {
    failure ??= err;
  });
  return async (chunk) => {
    if (failure) throw failure;
    if (!stream.write(chunk)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          stream.off('drain', done);
          stream.off('error', done);
          stream.off('close', done);
          resolve();
        };
        stream.on('drain', done);
        stream.on('error', done);
        stream.on('close', done);
      });
    }
    if (failure) throw failure;
  };
}

// ---------------------------------------------------------------------------------------------
// Commands

function say(io: CliIo, line: string): void {
  io.stderr.write(`${line}\n`);
}

async function withDatabase<T>(io: CliIo, work: (handle: DatabaseHandle) => Promise<T>): Promise<T> {
  const config = loadConfig(io.env);
  const handle = openDatabase(config.database);
  try {
    await migrateToLatest(handle.db);
    return await work(handle);
  } finally {
    await handle.close();
  }
}

async function exportCommand(argv: string[], io: CliIo): Promise<number> {
  const args = parseArgs(argv, { values: ['time-zone', 'output'], flags: ['force'] });
  if (args.positionals.length > 0) throw new UsageError(`"export" takes no FILE; use --output FILE or redirect standard output.`);
  const timeZone = timeZoneOption(args);
  const force = args.flags.has('force');
  const outputArg = args.values.get('output');
  if (force && !outputArg) throw new UsageError('--force only applies with --output FILE.');
  const output = outputArg === undefined ? null : path.resolve(io.cwd, outputArg);
  if (output) assertWritableDestination(output, force);

  return withDatabase(io, async ({ db }) => {
    let rows = 0;
    const chunks = waitlistCsvChunks(iterateAllWaitlist(db), timeZone, (n) => (rows += n));
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
    say(io, `Exported ${rows} waitlist ${rows === 1 ? 'entry' : 'entries'}${output ? ` to ${output}` : ''} (Date Joined in ${timeZone}).`);
    return 0;
  });
}

function readUtf8File(file: string): string {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new CliError(`No such file: ${file}`);
    if (code === 'EISDIR') throw new CliError(`${file} is a directory.`);
    throw new CliError(`Cannot read ${file}: ${(err as Error).message}`);
  }
  try {
    // fatal: a file saved in a legacy code page is refused rather than imported as mojibake.
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new CliError(`${file} is not UTF-8 text. Save it as "CSV UTF-8" and try again.`);
  }
}

async function importCommand(argv: string[], io: CliIo): Promise<number> {
  const args = parseArgs(argv, { values: ['time-zone'], flags: ['skip-bad'] });
  const file = oneFile(args, 'import', io);
  const timeZone = timeZoneOption(args);
  const skipBad = args.flags.has('skip-bad');

  const text = readUtf8File(file);
  let parsed;
  try {
    parsed = parseWaitlistCsv(text, { timeZone });
  } catch (err) {
    if (err instanceof CsvHeaderError) throw new CliError(`${file}: ${err.message}`);
    throw err;
  }
  for (const warning of parsed.warnings) say(io, `Warning: ${warning}`);
  for (const bad of parsed.bad) say(io, `Line ${bad.line}: ${bad.reason}`);
  const badCount = parsed.bad.length;
  if (badCount > 0 && !skipBad) {
    say(
      io,
      `Nothing imported: ${badCount} bad line${badCount === 1 ? '' : 's'}. Fix ${badCount === 1 ? 'it' : 'them'}, ` +
        `or run again with --skip-bad to import the other ${parsed.rows.length} ${parsed.rows.length === 1 ? 'entry' : 'entries'}.`,
    );
    return 1;
  }

  return withDatabase(io, async ({ db }) => {
    const entries: NewWaitlistEntry[] = parsed.rows.map((row) => ({
      id: randomUUID(),
      email: row.email,
      createdAt: row.createdAt,
      ipAddress: row.ipAddress,
      country: row.country,
      city: row.city,
      region: row.region,
    }));
    let inserted: number;
    try {
      // One transaction: any database error rolls back every row of this import.
      inserted = await db.transaction().execute((trx) => insertWaitlistEntriesSkippingDuplicates(trx, entries));
    } catch (err) {
      throw new CliError(`The import failed and was rolled back; nothing was imported. ${err instanceof Error ? err.message : String(err)}`);
    }
    const duplicates = parsed.duplicates + (entries.length - inserted);
    say(io, `Imported ${inserted}, skipped ${duplicates} duplicates, ${badCount} bad lines`);
    return 0;
  });
}

/** Pages per backup step: all of them, so the copy is one read snapshot (see backupCommand). */
const ALL_PAGES = 0x7fffffff;

async function backupCommand(argv: string[], io: CliIo): Promise<number> {
  const args = parseArgs(argv, { flags: ['force'] });
  const dest = oneFile(args, 'backup', io);
  const force = args.flags.has('force');
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
  const tmpCompanions = [`${tmp}-journal`, `${tmp}-wal`, `${tmp}-shm`];
  try {
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
    // It holds e-mail addresses and password hashes: owner-only.
    fs.chmodSync(tmp, 0o600);
    moveIntoPlace(tmp, dest, force);

    const size = fs.statSync(dest).size;
    say(
      io,
      `Backed up ${source} to ${dest}: ${formatSize(size)}, ` +
        (rows === null ? 'no waitlist table.' : `${rows} waitlist ${rows === 1 ? 'row' : 'rows'}.`),
    );
    return 0;
  } finally {
    removeQuietly(tmp, ...tmpCompanions);
  }
}

// ---------------------------------------------------------------------------------------------

/** The whole CLI; resolves to the exit code. */
export async function run(argv: string[], io: Partial<CliIo> = {}): Promise<number> {
  const env = io.env ?? process.env;
  const cli: CliIo = { stdout: io.stdout ?? process.stdout, stderr: io.stderr ?? process.stderr, env, cwd: io.cwd ?? defaultCwd(env) };
  const [command, ...args] = argv;
  if (!command) {
    cli.stderr.write(USAGE);
    return 2;
  }
  if (command === 'help' || command === '--help' || command === '-h') {
    cli.stdout.write(USAGE);
    return 0;
  }
  try {
    switch (command) {
      case 'export':
        return await exportCommand(args, cli);
      case 'import':
        return await importCommand(args, cli);
      case 'backup':
        return await backupCommand(args, cli);
      default:
        throw new UsageError(`Unknown command "${command}".`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      cli.stderr.write(`Error: ${err.message}\n\n${USAGE}`);
      return 2;
    }
    if (err instanceof ConfigError) {
      cli.stderr.write(`${err.message}\n`);
      return CONFIG_ERROR_EXIT_CODE;
    }
    if (err instanceof CliError) {
      cli.stderr.write(`Error: ${err.message}\n`);
      return err.exitCode;
    }
    cli.stderr.write(`Error: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

function startedAsScript(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return import.meta.url === pathToFileURL(fs.realpathSync(script)).href;
  } catch {
    return false;
  }
}

if (startedAsScript()) {
  runCli(() => run(process.argv.slice(2)));
}
