/**
 * The mail benchmark's floor, run as its own process (forked by mail.ts, as the product is its own
 * process): nodemailer sending pre-rendered messages straight to the bench's SMTP server, with no
 * database and no outbox.
 *
 * `connections: 1` is the product's own transport: `createMailTransport(…, { pool: true })` imported
 * from the build under test (dist/server/mail/transport.js), so every setting is the worker's, and
 * one message at a time, each sent when the previous one was acknowledged, as the worker sends.
 * `connections: k > 1` is what more connections would give: a nodemailer pool of k connections
 * (otherwise the same pool settings) with k messages in flight.
 *
 * One message in: `{ type: 'run', … }` (FloorCommand); one answer out (FloorResult), then it exits.
 */
import nodemailer from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool/index.js';
import type * as TransportModule from '../../../src/server/mail/transport.js';

export interface FloorMessage {
  subject: string;
  text: string;
  html: string;
  headers: Record<string, string>;
}

export interface FloorCommand {
  type: 'run';
  /** Absolute path of the build's dist/server/mail/transport.js. */
  transportModule: string;
  smtpUrl: string;
  from: string;
  count: number;
  connections: number;
  message: FloorMessage;
  /** Message `i` goes to `${toPrefix}-${i}@example.com` with Message-ID `<${idPrefix}-${i}@${idHost}>`. */
  toPrefix: string;
  idPrefix: string;
  idHost: string;
}

export interface FloorResult {
  type: 'done';
  /** Date.now() just before the first send (the transport made, no connection open yet). */
  startedAt: number;
  /** Date.now() when the last send was acknowledged. */
  finishedAt: number;
  /** This process's CPU over the sends, seconds. */
  cpuSeconds: number;
  errors: number;
  firstError: string | null;
}

export const floorMessageId = (command: Pick<FloorCommand, 'idPrefix' | 'idHost'>, i: number) => `<${command.idPrefix}-${i}@${command.idHost}>`;

async function run(command: FloorCommand): Promise<FloorResult> {
  const transport =
    command.connections === 1
      ? ((await import(command.transportModule)) as typeof TransportModule).createMailTransport({ smtpUrl: command.smtpUrl, dkim: null }, { pool: true })
      : nodemailer.createTransport({
          url: command.smtpUrl,
          pool: true,
          maxConnections: command.connections,
          maxMessages: 100,
          maxRequeues: 0,
          idleTimeout: 1_000,
        } satisfies SMTPPool.Options);
  let next = 0;
  let errors = 0;
  let firstError: string | null = null;
  const sender = async () => {
    while (next < command.count) {
      const i = next++;
      try {
        await transport.sendMail({
          from: command.from,
          to: `${command.toPrefix}-${i}@example.com`,
          subject: command.message.subject,
          text: command.message.text,
          html: command.message.html,
          headers: command.message.headers,
          messageId: floorMessageId(command, i),
        });
      } catch (err) {
        errors += 1;
        firstError ??= err instanceof Error ? err.message : String(err);
      }
    }
  };
  const cpuBefore = process.cpuUsage();
  const startedAt = Date.now();
  await Promise.all(Array.from({ length: command.connections }, sender));
  const finishedAt = Date.now();
  const cpu = process.cpuUsage(cpuBefore);
  transport.close();
  return { type: 'done', startedAt, finishedAt, cpuSeconds: (cpu.user + cpu.system) / 1e6, errors, firstError };
}

if (process.send && process.argv[2] === '--serve') {
  process.once('message', (command: FloorCommand) => {
    void run(command).then(
      (result) => process.send!(result, () => process.exit(0)),
      (err: unknown) => {
        process.stderr.write(`mail floor: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
        process.exit(1);
      },
    );
  });
}
