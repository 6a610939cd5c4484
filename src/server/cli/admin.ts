/**
 * Admin account CLI: `npm run admin -- <command>`.
 *
 *   create EMAIL          create an admin (password prompted twice, or read from the first line of stdin)
 *   list                  list admins: e-mail, created, last sign-in, active sessions
 *   delete EMAIL          delete an admin and its sessions
 *   set-password EMAIL    set a new password and sign the admin out everywhere
 *   audit [--limit N]     latest audit-log entries, newest first (default 50)
 *
 * Uses the same configuration as the server (DATABASE_URL) and runs migrations first.
 * Exit codes: 0 ok, 1 failed (unknown admin, duplicate, weak password…), 2 bad usage, 78 bad config.
 */
import { listAudit } from '../audit/audit-log.js';
import {
  AdminAccountError,
  assertStrongPassword,
  createAdmin,
  deleteAdmin,
  findAdminId,
  listAdmins,
  normaliseEmail,
  setAdminPassword,
} from '../auth/admins.js';
import { runCli } from './run-cli.js';
import { CONFIG_ERROR_EXIT_CODE, loadConfigOrReport } from '../config.js';
import { openDatabase, type DatabaseHandle } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';

const USAGE = `Usage: npm run admin -- <command>

Commands:
  create EMAIL          Create an admin. The password is asked twice (hidden) on a terminal,
                        or read from the first line of standard input otherwise.
  list                  List admins (e-mail, created, last sign-in, active sessions).
  delete EMAIL          Delete an admin and all of its sessions.
  set-password EMAIL    Set a new password; signs the admin out everywhere.
  audit [--limit N]     Show the latest audit-log entries, newest first (default 50).
`;

class UsageError extends Error {}
class CliError extends Error {}

function out(line = ''): void {
  process.stdout.write(`${line}\n`);
}

/** Reads one line from a terminal without echoing it. */
function promptHidden(prompt: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const stdin = process.stdin;
    process.stderr.write(prompt);
    let value = '';
    const wasRaw = stdin.isRaw;
    stdin.setRawMode(true);
    stdin.resume();
    stdin.setEncoding('utf8');
    const finish = (err: Error | null) => {
      stdin.setRawMode(wasRaw);
      stdin.pause();
      stdin.removeListener('data', onData);
      process.stderr.write('\n');
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') return finish(null);
        if (ch === '\u0003') return finish(new CliError('Cancelled.'));
        if (ch === '\u0004') return finish(value === '' ? new CliError('Cancelled.') : null);
        if (ch === '\u007f' || ch === '\b') value = [...value].slice(0, -1).join('');
        else if (ch >= ' ') value += ch;
      }
    };
    stdin.on('data', onData);
  });
}

/** The first line of a piped standard input (without its line ending). */
async function readFirstLine(): Promise<string> {
  const stdin = process.stdin;
  stdin.setEncoding('utf8');
  let text = '';
  for await (const chunk of stdin) {
    text += chunk as string;
    const nl = text.indexOf('\n');
    if (nl !== -1) {
      text = text.slice(0, nl);
      break;
    }
  }
  return text.replace(/\r$/, '');
}

async function readNewPassword(): Promise<string> {
  if (process.stdin.isTTY) {
    const first = await promptHidden('New password (at least 12 characters): ');
    assertStrongPassword(first);
    const second = await promptHidden('Repeat the password: ');
    if (first !== second) throw new CliError('The passwords do not match.');
    return first;
  }
  const password = await readFirstLine();
  if (password === '') throw new CliError('No password given: pipe it as the first line of standard input.');
  return password;
}

function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

function shortTime(iso: string | null): string {
  return iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : 'never';
}

function parseLimit(args: string[]): number {
  let limit = 50;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    let value: string | undefined;
    if (arg === '--limit') value = args[++i];
    else if (arg.startsWith('--limit=')) value = arg.slice('--limit='.length);
    else throw new UsageError(`Unknown option "${arg}".`);
    if (value === undefined || !/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 10_000) {
      throw new UsageError('--limit must be a whole number from 1 to 10000.');
    }
    limit = Number(value);
  }
  return limit;
}

function oneEmail(args: string[], command: string): string {
  if (args.length !== 1 || !args[0]) throw new UsageError(`"${command}" needs exactly one e-mail address.`);
  return normaliseEmail(args[0]);
}

async function run(handle: DatabaseHandle, command: string, args: string[]): Promise<void> {
  const { db } = handle;
  switch (command) {
    case 'create': {
      const email = oneEmail(args, command);
      if ((await findAdminId(db, email)) !== undefined) {
        throw new AdminAccountError('duplicate', `An admin with the e-mail ${email} already exists.`);
      }
      const password = await readNewPassword();
      const admin = await createAdmin(db, email, password);
      out(`Created admin ${admin.email}.`);
      return;
    }
    case 'list': {
      if (args.length > 0) throw new UsageError('"list" takes no arguments.');
      const admins = await listAdmins(db);
      if (admins.length === 0) {
        out('No admins yet. Create one with: npm run admin -- create you@example.com');
        return;
      }
      out(table(['Email', 'Created', 'Last sign-in', 'Sessions'], admins.map((a) => [a.email, shortTime(a.createdAt), shortTime(a.lastSignInAt), String(a.sessions)])));
      return;
    }
    case 'delete': {
      const email = oneEmail(args, command);
      await deleteAdmin(db, email);
      out(`Deleted admin ${email} and its sessions.`);
      return;
    }
    case 'set-password': {
      const email = oneEmail(args, command);
      // Check the account first so nobody types a password for nothing.
      if ((await findAdminId(db, email)) === undefined) throw new AdminAccountError('not_found', `No admin with the e-mail ${email}.`);
      const password = await readNewPassword();
      const revoked = await setAdminPassword(db, email, password);
      out(`Password updated for ${email}; ${revoked} session${revoked === 1 ? '' : 's'} signed out.`);
      return;
    }
    case 'audit': {
      const entries = await listAudit(db, parseLimit(args));
      if (entries.length === 0) {
        out('The audit log is empty.');
        return;
      }
      out(
        table(
          ['Time', 'Action', 'Actor', 'IP', 'Detail'],
          entries.map((e) => [shortTime(e.createdAt), e.action, e.actorEmail ?? '-', e.ip ?? '-', JSON.stringify(e.detail)]),
        ),
      );
      return;
    }
    default:
      throw new UsageError(`Unknown command "${command}".`);
  }
}

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  if (!command || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(USAGE);
    return command ? 0 : 2;
  }
  const config = loadConfigOrReport((text) => process.stderr.write(text));
  if (!config) return CONFIG_ERROR_EXIT_CODE;
  const handle = openDatabase(config.database);
  try {
    await migrateToLatest(handle.db);
    await run(handle, command, args);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`Error: ${err.message}\n\n${USAGE}`);
      return 2;
    }
    if (err instanceof AdminAccountError || err instanceof CliError) {
      process.stderr.write(`Error: ${err.message}\n`);
      return 1;
    }
    process.stderr.write(`Error: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  } finally {
    await handle.close();
  }
}

runCli(() => main(process.argv.slice(2)));
