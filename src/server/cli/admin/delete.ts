import { deleteAdmin } from '../../auth/admins.js';
import { withDatabase } from '../database.js';
import { defineCommand } from '../program.js';
import { oneEmail } from './arguments.js';

export const deleteCommand = defineCommand({
  synopsis: 'delete EMAIL',
  help: ['Delete an admin and all of its sessions.'],
  async run({ positionals }, io) {
    const email = oneEmail(positionals, 'delete');
    await withDatabase(io, (db) => deleteAdmin(db, email));
    io.stdout.write(`Deleted admin ${email} and its sessions.\n`);
  },
});
