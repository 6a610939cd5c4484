/**
 * E-mail CLI: `npm run mail -- <command>` (`npm run mail -- help` lists the commands).
 * Uses the same configuration as the server (SMTP_URL, MAIL_FROM, PUBLIC_URL, DKIM_*). The
 * skeleton, with the exit codes, is program.ts.
 */
import { checkWaitlistEmail } from '../../shared/waitlist/email.js';
import { loadConfig } from '../config.js';
import { createMailTransport, describeSendError } from '../mail/transport.js';
import { createMessageId } from '../mail/outbox.js';
import { messageIdHost } from '../mail/index.js';
import { CliError, defineCommand, runAsScript, runProgram, UsageError, type CliIo, type CliProgram } from './program.js';

const addressList = (list: ReadonlyArray<string | { address: string }>) =>
  list.length === 0 ? '(none)' : list.map((a) => (typeof a === 'string' ? a : a.address)).join(', ');

export const testCommand = defineCommand({
  synopsis: 'test EMAIL',
  help: [
    'Send a test message to EMAIL through SMTP_URL, not the outbox,',
    "and print the server's answer (exit code 0: accepted).",
  ],
  async run({ positionals }, io) {
    if (positionals.length !== 1 || !positionals[0]) throw new UsageError('"test" needs exactly one e-mail address.');
    const check = checkWaitlistEmail(positionals[0]);
    if (!check.ok) throw new UsageError(`"${positionals[0]}" is not a valid e-mail address.`);
    const config = loadConfig(io.env);
    if (!config.mail) throw new CliError('E-mail is off: SMTP_URL is not set, so nothing was sent.');
    const mail = config.mail;
    const transport = createMailTransport(mail);
    try {
      const info = await transport.sendMail({
        from: mail.from,
        to: check.email,
        subject: 'Test message',
        text: `This is a test message from ${mail.publicUrl}, sent with npm run mail -- test.\n`,
        messageId: createMessageId(messageIdHost(mail)),
      });
      io.stdout.write(
        `Server answered: ${info.response}\nAccepted: ${addressList(info.accepted)}\nRejected: ${addressList(info.rejected)}\nMessage-ID: ${info.messageId}\n`,
      );
      if (info.accepted.length === 0) throw new CliError(`The server accepted no recipient.`);
    } catch (err) {
      if (err instanceof CliError) throw err;
      throw new CliError(`Could not send through ${new URL(mail.smtpUrl).host}: ${describeSendError(err)}`);
    } finally {
      transport.close();
    }
  },
});

export const mailProgram: CliProgram = {
  name: 'mail',
  commands: [testCommand],
  footer: `  help  Show this help.

Exit codes: 0 ok, 1 failed, 2 bad usage, 78 bad configuration.
`,
};

/** The whole CLI with injectable streams (tests call it directly); resolves to the exit code. */
export function run(argv: readonly string[], io: Partial<CliIo> = {}): Promise<number> {
  return runProgram(mailProgram, argv, io);
}

runAsScript(mailProgram, import.meta.url);
