import path from 'node:path';
import { isKnownTimeZone } from '../../../shared/waitlist/display.js';
import { UsageError, type CliIo } from '../program.js';

/** `--time-zone ZONE`, UTC when absent. */
export const timeZoneOption = { 'time-zone': { type: 'string' } } as const;

export function timeZoneOf(options: { 'time-zone'?: string }): string {
  const zone = options['time-zone'] ?? 'UTC';
  if (!isKnownTimeZone(zone)) throw new UsageError(`Unknown time zone "${zone}". Use an IANA name such as Europe/Berlin or America/New_York.`);
  return zone;
}

/** The one FILE a command takes, resolved against the directory the user ran the command in. */
export function oneFile(positionals: string[], command: string, io: CliIo): string {
  if (positionals.length !== 1 || !positionals[0]) throw new UsageError(`"${command}" needs exactly one FILE.`);
  return path.resolve(io.cwd, positionals[0]);
}
