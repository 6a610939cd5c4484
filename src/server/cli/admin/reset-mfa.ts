import { resetMfa } from '../../auth/mfa.js';
import { withDatabase } from '../database.js';
import { defineCommand } from '../program.js';
import { oneEmail } from './arguments.js';

export const resetMfaCommand = defineCommand({
  synopsis: 'reset-mfa EMAIL',
  help: [
    'Remove every two-factor (TOTP) factor of an admin who lost the authenticator, and sign the admin',
    'out everywhere. The admin then signs in with the password alone and can enrol again.',
  ],
  async run({ positionals }, io) {
    const email = oneEmail(positionals, 'reset-mfa');
    const { factors, sessions } = await withDatabase(io, (db) => resetMfa(db, email));
    const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
    io.stdout.write(`Removed ${plural(factors, 'two-factor factor')} of ${email}; ${plural(sessions, 'session')} signed out.\n`);
  },
});
