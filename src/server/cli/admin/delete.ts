import { deleteAdmin } from '../../auth/admins.js';
import { scrubDeletedRows } from '../../db/database.js';
import { withDatabase } from '../database.js';
import { defineCommand } from '../program.js';
import { oneEmail } from './arguments.js';

export const deleteCommand = defineCommand({
  synopsis: 'delete EMAIL',
  help: ['Delete an admin and all of its sessions.'],
  async run({ positionals }, io) {
    const email = oneEmail(positionals, 'delete');
    await withDatabase(io, async (db) => {
      await deleteAdmin(db, email);
      // The account's rows (address, password hash, sessions) off the disk too (SQLite's WAL).
      await scrubDeletedRows(db);
    });
    io.stdout.write(`Deleted admin ${email} and its sessions.\n`);
  },
});
