/**
 * The mail benchmark's SMTP server: the `smtp-server` package on 127.0.0.1, no TLS, no auth,
 * accepting every message. It keeps no bodies (tens of thousands of HTML e-mails would weigh on the
 * shared machine), only each message's Message-ID, the time it arrived and its size, so that a run
 * can measure the rate and check that every message arrived exactly once.
 */
import { SMTPServer, type SMTPServerDataStream } from 'smtp-server';

export interface Arrival {
  messageId: string;
  /** Date.now() when the end of DATA was read (before the 250 answer goes out). */
  at: number;
  bytes: number;
}

export interface BenchSmtpServer {
  port: number;
  url: string;
  /** Messages accepted since the last `take()`. */
  readonly count: number;
  /** The arrivals since the last `take()`, and forgets them. */
  take(): Arrival[];
  /**
   * Resolves when `count` reaches `target`; rejects when no message arrives for `stallMs`
   * (the sender stopped or failed) or `onCheck` throws (e.g. the server process exited).
   */
  waitFor(target: number, stallMs: number, onCheck?: () => void): Promise<void>;
  close(): Promise<void>;
}

const HEADER_END = Buffer.from('\r\n\r\n');
const MESSAGE_ID = /^message-id:[ \t]*(<[^>\r\n]*>)/im;

/** The Message-ID of a raw header block ('' when it has none). */
export function messageIdOf(head: string): string {
  return MESSAGE_ID.exec(head.replace(/\r\n[ \t]+/g, ' '))?.[1] ?? '';
}

export async function startBenchSmtpServer(): Promise<BenchSmtpServer> {
  let arrivals: Arrival[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    // A local server: no DNS lookup of the client per connection.
    disableReverseLookup: true,
    logger: false,
    // Far above the bench's own connection count; smtp-server's default (Infinity) would do too.
    maxClients: 1000,
    onData(stream: SMTPServerDataStream, _session, callback) {
      let head: Buffer | null = Buffer.alloc(0);
      let messageId = '';
      let bytes = 0;
      stream.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (head === null) return;
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf(HEADER_END);
        if (end >= 0 || head.length > 64 * 1024) {
          messageId = messageIdOf(head.toString('latin1', 0, end >= 0 ? end : head.length));
          head = null;
        }
      });
      stream.on('end', () => {
        if (head !== null) messageId = messageIdOf(head.toString('latin1'));
        arrivals.push({ messageId, at: Date.now(), bytes });
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  server.on('error', (err) => process.stderr.write(`bench SMTP server: ${err.message}\n`));
  const address = server.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    get count() {
      return arrivals.length;
    },
    take() {
      const taken = arrivals;
      arrivals = [];
      return taken;
    },
    waitFor(target, stallMs, onCheck) {
      return new Promise((resolve, reject) => {
        let seen = arrivals.length;
        let lastProgress = Date.now();
        const timer = setInterval(() => {
          try {
            onCheck?.();
          } catch (err) {
            clearInterval(timer);
            reject(err instanceof Error ? err : new Error(String(err)));
            return;
          }
          if (arrivals.length >= target) {
            clearInterval(timer);
            resolve();
          } else if (arrivals.length > seen) {
            seen = arrivals.length;
            lastProgress = Date.now();
          } else if (Date.now() - lastProgress > stallMs) {
            clearInterval(timer);
            reject(new Error(`${arrivals.length} of ${target} messages arrived, then none for ${stallMs / 1000} s`));
          }
        }, 20);
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
