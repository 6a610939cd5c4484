/**
 * Admin account CLI: `npm run admin -- <command>` (`npm run admin -- help` lists the commands).
 * Uses the same configuration as the server (DATABASE_URL) and runs migrations first; results go
 * to standard output. The skeleton, with the exit codes, is program.ts.
 */
import { apiKeysCommand } from './admin/api-keys.js';
import { auditCommand } from './admin/audit.js';
import { createCommand } from './admin/create.js';
import { deleteCommand } from './admin/delete.js';
import { listCommand } from './admin/list.js';
import { listsCommand } from './admin/lists.js';
import { resetMfaCommand } from './admin/reset-mfa.js';
import { rotateKeyCommand } from './admin/rotate-key.js';
import { rotateSecretCommand } from './admin/rotate-secret.js';
import { setPasswordCommand } from './admin/set-password.js';
import { setRoleCommand } from './admin/set-role.js';
import { sessionsCommand } from './admin/sessions.js';
import { unlockCommand } from './admin/unlock.js';
import { webhooksCommand } from './admin/webhooks.js';
import { runAsScript, runProgram, type CliIo, type CliProgram } from './program.js';

export const adminProgram: CliProgram = {
  name: 'admin',
  commands: [createCommand, listCommand, deleteCommand, setPasswordCommand, setRoleCommand, auditCommand, rotateKeyCommand, rotateSecretCommand, resetMfaCommand, unlockCommand, sessionsCommand, apiKeysCommand, webhooksCommand, listsCommand],
};

/** The whole CLI with injectable streams (tests call it directly); resolves to the exit code. */
export function run(argv: readonly string[], io: Partial<CliIo> = {}): Promise<number> {
  return runProgram(adminProgram, argv, io);
}

runAsScript(adminProgram, import.meta.url);
