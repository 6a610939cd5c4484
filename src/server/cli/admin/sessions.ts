import type { Kysely } from 'kysely';
import { recordAudit } from '../../audit/audit-log.js';
import { findAdminId } from '../../auth/admins.js';
import { sessionLimits, type SessionLimits } from '../../auth/session-limits.js';
import { deleteSessions, listLiveSessions } from '../../auth/sessions-repository.js';
import { loadConfig } from '../../config.js';
import { toIsoTimestamp } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import { withDatabase } from '../database.js';
import { CliError, defineCommand, UsageError } from '../program.js';
import { oneEmail } from './arguments.js';
import { escapeForTerminal } from './audit.js';
import { shortTime, table } from './table.js';

/** The widest user agent shown; the rest is cut with an ellipsis. */
const USER_AGENT_COLUMN = 60;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface SessionSummary {
  id: string;
  createdAt: string;
  /** Last real use (sign-in, admin API call, password change). */
  lastActiveAt: string;
  /** Last sign-in or token refresh. */
  refreshedAt: string;
  ip: string | null;
  userAgent: string | null;
}

async function adminIdOf(db: Kysely<Database>, email: string): Promise<string> {
  const id = await findAdminId(db, email);
  if (id === undefined) throw new CliError(`No admin with the e-mail ${email}.`);
  return id;
}

/** The admin's sessions, newest sign-in first; sessions past `limits` are deleted first, as the server would. */
export async function listAdminSessions(db: Kysely<Database>, email: string, limits: SessionLimits, now = Date.now()): Promise<SessionSummary[]> {
  const rows = await listLiveSessions(db, await adminIdOf(db, email), limits, now);
  return rows.map((row) => ({
    id: row.id,
    createdAt: toIsoTimestamp(row.created_at),
    lastActiveAt: toIsoTimestamp(row.last_active_at ?? row.updated_at),
    refreshedAt: toIsoTimestamp(row.updated_at),
    ip: row.ip_address,
    userAgent: row.user_agent,
  }));
}

/** Signs out one session of the admin (`which` its id) or all of them; returns how many ended. */
export async function revokeAdminSessions(db: Kysely<Database>, email: string, which: string): Promise<number> {
  const id = await adminIdOf(db, email);
  if (which !== 'all' && !UUID.test(which)) throw new UsageError(`--revoke takes a session id (see "sessions ${email}") or "all".`);
  const ended = await deleteSessions(db, id, which === 'all' ? 'all' : { only: which.toLowerCase() });
  if (which !== 'all' && ended === 0) throw new CliError(`${email} has no session ${which}.`);
  await recordAudit(db, { action: 'session_revoked', actorEmail: email, actorId: id, ip: null, detail: { sessions: which, sessions_ended: ended, by: 'cli' } });
  return ended;
}

function cut(text: string, width: number): string {
  return text.length > width ? `${text.slice(0, width - 1)}…` : text;
}

export const sessionsCommand = defineCommand({
  synopsis: 'sessions EMAIL [--revoke ID|all]',
  help: [
    "List an admin's live sessions (id, signed in, last active, IP, browser), or sign one or all of",
    'them out with --revoke. The admin API refuses a signed-out session at once.',
  ],
  options: { revoke: { type: 'string' } },
  async run({ positionals, options }, io) {
    const email = oneEmail(positionals, 'sessions');
    const revoke = options.revoke;
    if (revoke !== undefined) {
      const ended = await withDatabase(io, (db) => revokeAdminSessions(db, email, revoke));
      io.stdout.write(`${ended} session${ended === 1 ? '' : 's'} of ${email} signed out.\n`);
      return;
    }
    const limits = sessionLimits(loadConfig(io.env).auth);
    const sessions = await withDatabase(io, (db) => listAdminSessions(db, email, limits));
    if (sessions.length === 0) {
      io.stdout.write(`${email} has no active session.\n`);
      return;
    }
    const rows = sessions.map((s) => [
      s.id,
      shortTime(s.createdAt),
      shortTime(s.lastActiveAt),
      s.ip === null ? '-' : escapeForTerminal(s.ip),
      s.userAgent === null ? '-' : cut(escapeForTerminal(s.userAgent), USER_AGENT_COLUMN),
    ]);
    io.stdout.write(`${table(['Session', 'Signed in', 'Last active', 'IP', 'Browser'], rows)}\n`);
  },
});
