import { listAudit } from '../../audit/audit-log.js';
import { withDatabase } from '../database.js';
import { defineCommand, UsageError } from '../program.js';
import { shortTime, table } from './table.js';

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 10_000;

/**
 * Characters a terminal acts on rather than shows: C0 and C1 controls (escape sequences, carriage
 * returns), the bidirectional controls (U+061C, U+200E/F, U+202A–U+202E, U+2066–U+2069, which can
 * make text read backwards) and the invisible separators and joiners (U+200B–U+200D, U+2028/9,
 * U+2060–U+2065, U+FEFF). Audit entries hold what strangers typed (a failed sign-in's address), so
 * none of them reaches the terminal as is.
 */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

const escapeUnsafe = (text: string) => text.replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** A value as printable text: unsafe characters become `\uXXXX`, and a backslash `\\` so nothing is ambiguous. */
export function escapeForTerminal(text: string): string {
  return escapeUnsafe(text.replace(/\\/g, '\\\\'));
}

/** JSON for the terminal: JSON.stringify leaves C1 and the bidirectional controls raw; `\uXXXX` keeps it valid JSON. */
function jsonForTerminal(value: unknown): string {
  return escapeUnsafe(JSON.stringify(value));
}

export const auditCommand = defineCommand({
  synopsis: 'audit [--limit N]',
  help: [
    `Show the latest audit-log entries, newest first (default ${DEFAULT_LIMIT}).`,
    'Control and bidirectional characters are shown as \\uXXXX.',
  ],
  options: { limit: { type: 'string' } },
  async run({ positionals, options }, io) {
    if (positionals.length > 0) throw new UsageError(`Unknown option "${positionals[0]}".`);
    const value = options.limit ?? String(DEFAULT_LIMIT);
    if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > MAX_LIMIT) {
      throw new UsageError(`--limit must be a whole number from 1 to ${MAX_LIMIT}.`);
    }
    const entries = await withDatabase(io, (db) => listAudit(db, Number(value)));
    if (entries.length === 0) {
      io.stdout.write('The audit log is empty.\n');
      return;
    }
    const rows = entries.map((e) => [
      shortTime(e.createdAt),
      escapeForTerminal(e.action),
      e.actorEmail === null ? '-' : escapeForTerminal(e.actorEmail),
      e.ip === null ? '-' : escapeForTerminal(e.ip),
      jsonForTerminal(e.detail),
    ]);
    io.stdout.write(`${table(['Time', 'Action', 'Actor', 'IP', 'Detail'], rows)}\n`);
  },
});
