import { parseRole, ROLE_NAMES, setAdminRole } from '../../auth/admin-roles.js';
import { normalizeEmail } from '../../auth/admins.js';
import { withDatabase } from '../database.js';
import { defineCommand, UsageError } from '../program.js';

export const setRoleCommand = defineCommand({
  synopsis: 'set-role EMAIL ROLE',
  help: [
    `Give an admin a role: ${ROLE_NAMES}. Audited; counts from the admin's next request.`,
    'The last owner keeps the role until another admin is made an owner.',
  ],
  async run({ positionals }, io) {
    if (positionals.length !== 2 || !positionals[0] || !positionals[1]) throw new UsageError('"set-role" needs an e-mail address and a role.');
    const email = normalizeEmail(positionals[0]);
    const role = parseRole(positionals[1]);
    if (role === null) throw new UsageError(`Unknown role "${positionals[1]}": use one of ${ROLE_NAMES}.`);
    // A refusal (no such admin, the last owner) is reported as `Error: <message>`, exit code 1.
    const change = await withDatabase(io, (db) => setAdminRole(db, { email }, role, { by: 'cli' }));
    io.stdout.write(change.from === change.to ? `${change.email} is already ${role}.\n` : `${change.email} is now ${role} (was ${change.from}).\n`);
  },
});
