/**
 * A client looping on refused sign-ins (security review, finding 2), beside the signup load: one
 * keep-alive connection sending `POST /auth/v1/token?grant_type=password` with a wrong password,
 * the next as soon as the answer is in, all from one client address (X-Forwarded-For, the product
 * runs with TRUST_PROXY=1). After AUTH_IP_MAX_ATTEMPTS attempts (30 by default) every answer is a
 * 429: what is measured is what those refusals cost everyone else's signups. Raw HTTP/1.1 on a
 * plain socket, as the load generator writes it (load-generator.ts): an HTTP client library would
 * cost the two shared cores more than the refusals being measured.
 */
import net from 'node:net';

export interface RefusedSignIns {
  /** Starts looping against the server on `port` (a no-op while already looping). */
  start(port: number): void;
  /** Stops after the answer in flight; resolves once it is in. */
  stop(): Promise<void>;
  /** Answers by status since the start of the run (0: connection errors). */
  statuses: Record<string, number>;
  /** Seconds spent looping. */
  seconds(): number;
}

const BODY = JSON.stringify({ email: 'refused-sign-in@bench.example', password: 'not-the-password-42', gotrue_meta_security: {} });
const HEADER_END = '\r\n\r\n';

function request(port: number, clientIp: string): Buffer {
  return Buffer.from(
    [
      'POST /auth/v1/token?grant_type=password HTTP/1.1',
      `Host: 127.0.0.1:${port}`,
      'Content-Type: application/json',
      `Content-Length: ${Buffer.byteLength(BODY)}`,
      `X-Forwarded-For: ${clientIp}`,
      'X-Supabase-Api-Version: 2024-01-01',
      '',
      BODY,
    ].join('\r\n'),
  );
}

export function refusedSignIns(clientIp = '198.51.100.250'): RefusedSignIns {
  const statuses: Record<string, number> = {};
  let running: Promise<void> | null = null;
  let stopping = false;
  let loopedMs = 0;

  /** Sends request after request on one connection until stopped (or the connection fails). */
  const loop = (port: number) =>
    new Promise<void>((resolve) => {
      const started = performance.now();
      const bytes = request(port, clientIp);
      const socket = net.connect(port, '127.0.0.1');
      let buffered = '';
      const finish = () => {
        loopedMs += performance.now() - started;
        socket.destroy();
        resolve();
      };
      socket.setNoDelay(true);
      socket.setEncoding('latin1');
      socket.on('connect', () => socket.write(bytes));
      socket.on('data', (chunk: string) => {
        buffered += chunk;
        // One answer in flight: complete once its body (Content-Length; the answers are small) is in.
        const end = buffered.indexOf(HEADER_END);
        if (end === -1) return;
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(buffered.slice(0, end))?.[1] ?? 0);
        if (buffered.length < end + HEADER_END.length + length) return;
        const status = buffered.slice(9, 12);
        statuses[status] = (statuses[status] ?? 0) + 1;
        buffered = buffered.slice(end + HEADER_END.length + length);
        if (stopping) finish();
        else socket.write(bytes);
      });
      socket.on('error', () => {
        statuses['0'] = (statuses['0'] ?? 0) + 1;
        finish();
      });
    });

  return {
    statuses,
    start(port) {
      if (running) return;
      stopping = false;
      running = loop(port);
    },
    async stop() {
      stopping = true;
      await running;
      running = null;
    },
    seconds: () => loopedMs / 1000,
  };
}
