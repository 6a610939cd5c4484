import { listAdmins } from '../../auth/admins.js';
import { withDatabase } from '../database.js';
import { defineCommand, UsageError } from '../program.js';
import { shortTime, table } from './table.js';

export const listCommand = defineCommand({
  synopsis: 'list',
  help: ['List admins (e-mail, created, last sign-in, active sessions, role).'],
  async run({ positionals }, io) {
    if (positionals.length > 0) throw new UsageError('"list" takes no arguments.');
    const admins = await withDatabase(io, listAdmins);
    if (admins.length === 0) {
      io.stdout.write('No admins yet. Create one with: npm run admin -- create you@example.com\n');
      return;
    }
    const rows = admins.map((a) => [a.email, shortTime(a.createdAt), shortTime(a.lastSignInAt), String(a.sessions), a.role]);
    io.stdout.write(`${table(['Email', 'Created', 'Last sign-in', 'Sessions', 'Role'], rows)}\n`);
  },
});
