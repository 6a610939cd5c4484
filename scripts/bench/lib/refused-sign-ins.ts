/**
 * A client looping on refused sign-ins (security review, finding 2), beside the signup load: one
 * keep-alive connection sending `POST /auth/v1/token?grant_type=password` with a wrong password,
 * the next as soon as the answer is in, all from one client address (X-Forwarded-For, the product
 * runs with TRUST_PROXY=1). After AUTH_IP_MAX_ATTEMPTS attempts (30 by default) every answer is a
 * 429: what is measured is what those refusals cost everyone else's signups.
 */
import http from 'node:http';

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

export function refusedSignIns(clientIp = '198.51.100.250'): RefusedSignIns {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const statuses: Record<string, number> = {};
  let running: Promise<void> | null = null;
  let stopping = false;
  let loopedMs = 0;

  const once = (port: number) =>
    new Promise<number>((resolve) => {
      const request = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/auth/v1/token?grant_type=password',
          agent,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(BODY),
            'x-forwarded-for': clientIp,
            'x-supabase-api-version': '2024-01-01',
          },
        },
        (response) => {
          response.resume();
          response.once('end', () => resolve(response.statusCode ?? 0));
        },
      );
      request.once('error', () => resolve(0));
      request.end(BODY);
    });

  const loop = async (port: number) => {
    const started = performance.now();
    while (!stopping) {
      const status = await once(port);
      statuses[status] = (statuses[status] ?? 0) + 1;
      // A refused connection: do not spin.
      if (status === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    loopedMs += performance.now() - started;
  };

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
