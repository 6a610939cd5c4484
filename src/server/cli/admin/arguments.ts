import { normalizeEmail } from '../../auth/admins.js';
import { UsageError } from '../program.js';

/** The one e-mail address a command takes, normalized. */
export function oneEmail(positionals: string[], command: string): string {
  if (positionals.length !== 1 || !positionals[0]) throw new UsageError(`"${command}" needs exactly one e-mail address.`);
  return normalizeEmail(positionals[0]);
}
