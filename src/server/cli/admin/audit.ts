import { listAudit } from '../../audit/audit-log.js';
import { withDatabase } from '../database.js';
import { defineCommand, UsageError } from '../program.js';
import { shortTime, table } from './table.js';

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 10_000;

export const auditCommand = defineCommand({
  synopsis: 'audit [--limit N]',
  help: [`Show the latest audit-log entries, newest first (default ${DEFAULT_LIMIT}).`],
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
    const rows = entries.map((e) => [shortTime(e.createdAt), e.action, e.actorEmail ?? '-', e.ip ?? '-', JSON.stringify(e.detail)]);
    io.stdout.write(`${table(['Time', 'Action', 'Actor', 'IP', 'Detail'], rows)}\n`);
  },
});
