import { AdminAccountError, createAdmin, findAdminId } from '../../auth/admins.js';
import { withDatabase } from '../database.js';
import { defineCommand } from '../program.js';
import { oneEmail } from './arguments.js';
import { readNewPassword } from './password-input.js';

export const createCommand = defineCommand({
  synopsis: 'create EMAIL',
  help: [
    'Create an admin. The password is asked twice (hidden) on a terminal,',
    'or read from the first line of standard input otherwise.',
  ],
  async run({ positionals }, io) {
    const email = oneEmail(positionals, 'create');
    await withDatabase(io, async (db) => {
      // Check first, so nobody types a password for nothing.
      if ((await findAdminId(db, email)) !== undefined) {
        throw new AdminAccountError('duplicate', `An admin with the e-mail ${email} already exists.`);
      }
      const admin = await createAdmin(db, email, await readNewPassword(io));
      io.stdout.write(`Created admin ${admin.email}.\n`);
    });
  },
});
