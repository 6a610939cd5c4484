import { AdminAccountError, countAdmins, createAdmin, findAdminId, firstAdminIsOwner } from '../../auth/admins.js';
import { parseRole, ROLE_NAMES } from '../../auth/admin-roles.js';
import { withDatabase } from '../database.js';
import { defineCommand, UsageError } from '../program.js';
import { oneEmail } from './arguments.js';
import { readNewPassword } from './password-input.js';

export const createCommand = defineCommand({
  synopsis: 'create EMAIL [--role ROLE]',
  help: [
    'Create an admin. The password is asked twice (hidden) on a terminal,',
    'or read from the first line of standard input otherwise.',
    `--role: ${ROLE_NAMES} (default: admin; the first admin is always an owner).`,
  ],
  options: { role: { type: 'string' } },
  async run({ positionals, options }, io) {
    const email = oneEmail(positionals, 'create');
    const role = options.role === undefined ? undefined : parseRole(options.role);
    if (role === null) throw new UsageError(`Unknown role "${options.role}": use one of ${ROLE_NAMES}.`);
    await withDatabase(io, async (db) => {
      // Check first, so nobody types a password for nothing.
      if ((await findAdminId(db, email)) !== undefined) {
        throw new AdminAccountError('duplicate', `An admin with the e-mail ${email} already exists.`);
      }
      if (role !== undefined && role !== 'owner' && (await countAdmins(db)) === 0) {
        throw new AdminAccountError('last_owner', firstAdminIsOwner(email));
      }
      const admin = await createAdmin(db, email, await readNewPassword(io), role === undefined ? {} : { role });
      io.stdout.write(`Created admin ${admin.email} (${admin.role}).\n`);
    });
  },
});
