import { AdminAccountError, findAdminId, setAdminPassword } from '../../auth/admins.js';
import { withDatabase } from '../database.js';
import { defineCommand } from '../program.js';
import { oneEmail } from './arguments.js';
import { readNewPassword } from './password-input.js';

export const setPasswordCommand = defineCommand({
  synopsis: 'set-password EMAIL',
  help: ['Set a new password; signs the admin out everywhere.'],
  async run({ positionals }, io) {
    const email = oneEmail(positionals, 'set-password');
    const revoked = await withDatabase(io, async (db) => {
      // Check the account first so nobody types a password for nothing.
      if ((await findAdminId(db, email)) === undefined) throw new AdminAccountError('not_found', `No admin with the e-mail ${email}.`);
      return setAdminPassword(db, email, await readNewPassword(io));
    });
    io.stdout.write(`Password updated for ${email}; ${revoked} session${revoked === 1 ? '' : 's'} signed out.\n`);
  },
});
