import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';

/** A message as the test SMTP server received it. */
export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  /** Header value by lower-case name (unfolded); the first occurrence. */
  header(name: string): string | undefined;
  /** The text after the headers. */
  body: string;
}

/** What the server answers to a message: nothing (accept), or an SMTP reply code and text. */
export type SmtpAnswer = undefined | { code: number; message: string };

export interface TestSmtpServer {
  port: number;
  url: string;
  /** Accepted messages, in order. */
  messages: ReceivedMail[];
  /** Every DATA received, accepted or not. */
  attempts: number;
  close(): Promise<void>;
}

function parse(raw: string, from: string, to: string[]): ReceivedMail {
  const split = raw.indexOf('\r\n\r\n');
  const head = split === -1 ? raw : raw.slice(0, split);
  const body = split === -1 ? '' : raw.slice(split + 4);
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!headers.has(name)) headers.set(name, line.slice(colon + 1).trim());
  }
  return { from, to, raw, body, header: (name) => headers.get(name.toLowerCase()) };
}

/**
 * A real SMTP server (the `smtp-server` package) on 127.0.0.1, port 0 unless given, no TLS, no auth.
 * `answer` decides each message's reply (it may wait, to hold a message in flight).
 */
export async function startSmtpServer(
  options: { port?: number; answer?: (mail: ReceivedMail, index: number) => SmtpAnswer | Promise<SmtpAnswer> } = {},
): Promise<TestSmtpServer> {
  const messages: ReceivedMail[] = [];
  const state = { attempts: 0 };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback: (err?: Error | null) => void) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const index = state.attempts++;
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        const mail = parse(
          Buffer.concat(chunks).toString('utf8'),
          from,
          session.envelope.rcptTo.map((r) => r.address),
        );
        void Promise.resolve(options.answer?.(mail, index)).then((answer) => {
          if (!answer) {
            messages.push(mail);
            callback();
            return;
          }
          const err = new Error(answer.message) as Error & { responseCode: number };
          err.responseCode = answer.code;
          callback(err);
        });
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const address = server.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    messages,
    get attempts() {
      return state.attempts;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A port nothing listens on (for the connection-refused case); a server may start on it later. */
export async function unusedPort(): Promise<number> {
  const s = await startSmtpServer();
  await s.close();
  return s.port;
}
