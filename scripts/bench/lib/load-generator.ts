/**
 * The signup benchmark's load generator, run as its own Node process (forked by signup.ts with an
 * IPC channel) so that its CPU can be measured apart from the servers'. Closed loop (`run`): every
 * keep-alive connection sends one `POST /api/waitlist` and sends the next when the answer is in;
 * open loop (`open`, open-loop.ts): a steady rate, whatever the answers do.
 * Requests are written as raw HTTP/1.1 text on plain sockets and answers are read only as far as
 * the status and the length: an HTTP client library would cost the shared cores more than the
 * servers being measured.
 *
 * With `challenge` set, each signup carries a solved proof-of-work challenge from the pool
 * (challenge-pool.ts, filled by `fill` before the phase) in CHALLENGE_FIELD, as the form posts it;
 * a signup the pool has none left for goes without one and is counted (`unsolved`), never hidden.
 *
 * Messages in: `{ type: 'run', id, port, seconds, connections, record, challenge }`, `{ type: 'open', …, rate }`,
 * `{ type: 'fill', id, port, size, reset }`, `{ type: 'acks', id, file }`, `{ type: 'exit' }`. Out:
 * `{ type: 'result', id, result: PhaseResult }`, `{ type: 'open-result', id, result: OpenPhaseResult }`,
 * `{ type: 'filled', id, result | error }`, `{ type: 'acks', id, count }`.
 */
import fs from 'node:fs';
import net from 'node:net';
import { benchEmail, parseEmailDomains, randomClientIp, type EmailDomains } from './addresses.js';
import { challengePool, type FillResult } from './challenge-pool.js';
import { bucketOf, emptyHistogram } from './histogram.js';
import { runOpenLoop, type OpenLoopResult } from './open-loop.js';
import { responseReader } from './response-reader.js';
import { CHALLENGE_FIELD } from '../../../src/shared/waitlist/challenge-contract.js';

export interface GeneratorOptions {
  /** E-mail prefix of this run (letters and digits). */
  prefix: string;
  ipv6Share: number;
  /** How many domains the addresses are spread over (addresses.ts). */
  emailDomains?: EmailDomains;
}

export interface RunCommand {
  type: 'run';
  id: number;
  port: number;
  seconds: number;
  connections: number;
  /** Remember which signups were acknowledged (201), for the check against the database. */
  record: boolean;
  /** Send each signup with a solution from the challenge pool. */
  challenge?: boolean;
}

export interface PhaseResult {
  /** Wall time from the first request to the last answer, seconds. */
  elapsed: number;
  /** Answers by status; 0 counts connection errors, -1 answers still missing at the end. */
  statuses: Record<string, number>;
  /** Latency histogram of every answer (see histogram.ts). */
  histogram: number[];
  /** The generator's own CPU time over the phase, seconds (user + system). */
  cpuSeconds: number;
  /** Signup numbers sent in this phase: [first, next). */
  numbers: [number, number];
  /** With `challenge`: signups sent without a solution because the pool had run dry. */
  unsolved: number;
}

/** Open loop (open-loop.ts): `rate` signups/s evenly spread over up to `connections` connections. */
export interface OpenCommand {
  type: 'open';
  id: number;
  port: number;
  seconds: number;
  rate: number;
  connections: number;
  record: boolean;
  challenge?: boolean;
}

export interface OpenPhaseResult extends OpenLoopResult {
  cpuSeconds: number;
  numbers: [number, number];
  unsolved: number;
}

/** Fetch and solve challenges from the product on `port` until `size` are ready (reset: a new product). */
export interface FillCommand {
  type: 'fill';
  id: number;
  port: number;
  size: number;
  reset: boolean;
}

export type GeneratorMessage = RunCommand | OpenCommand | FillCommand | { type: 'acks'; id: number; file: string } | { type: 'exit' };
export type GeneratorReply =
  | { type: 'result'; id: number; result: PhaseResult }
  | { type: 'open-result'; id: number; result: OpenPhaseResult }
  | { type: 'filled'; id: number; result: FillResult | null; error?: string }
  | { type: 'acks'; id: number; count: number };

const HOST = '127.0.0.1';
/** How long the phase waits at its end for answers still in flight before giving them up. */
const DRAIN_MS = 30_000;

const headOf = (port: number) => `POST /api/waitlist HTTP/1.1\r\nHost: ${HOST}:${port}\r\nContent-Type: application/json\r\nAccept: application/json\r\n`;

export function createGenerator(options: GeneratorOptions) {
  let next = 0;
  let acks = new Uint8Array(1 << 16);
  const pool = challengePool(options.ipv6Share);

  /**
   * Signup number `n`'s request: a fresh address from a random client address, or with `challenge`
   * a solution from the pool and the address that fetched it (`dry` counts the signups it had none for).
   */
  function request(head: string, n: number, challenge: boolean | undefined, dry: { unsolved: number }): string {
    const email = benchEmail(options.prefix, n, options.emailDomains);
    const solved = challenge ? pool.take() : null;
    if (challenge && !solved) dry.unsolved += 1;
    const body = solved ? `{"email":"${email}","${CHALLENGE_FIELD}":"${solved.solution}"}` : `{"email":"${email}"}`;
    return `${head}X-Forwarded-For: ${solved ? solved.ip : randomClientIp(options.ipv6Share)}\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
  }

  function markAck(n: number): void {
    if (n >= acks.length) {
      let size = acks.length;
      while (size <= n) size *= 2;
      const grown = new Uint8Array(size);
      grown.set(acks);
      acks = grown;
    }
    acks[n] = 1;
  }

  /**
   * Writes the acknowledged numbers as a bitmap of bytes (index = signup number), returns their
   * count and forgets them: the next database starts with none.
   */
  function writeAcks(file: string): number {
    const used = acks.subarray(0, next);
    fs.writeFileSync(file, used);
    let count = 0;
    for (let i = 0; i < used.length; i++) count += used[i]!;
    used.fill(0);
    return count;
  }

  function run(command: RunCommand): Promise<PhaseResult> {
    const { port, seconds, connections, record } = command;
    const histogram = emptyHistogram();
    const statuses: Record<string, number> = {};
    const count = (status: number) => (statuses[status] = (statuses[status] ?? 0) + 1);
    const head = headOf(port);
    const dry = { unsolved: 0 };
    const firstNumber = next;
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    const stopAt = started + seconds * 1000;
    let lastAnswer = started;

    return new Promise((resolve) => {
      let open = connections;
      let finished = false;
      /** Each live connection, with what gives up its answer in flight at the end. */
      const live = new Map<net.Socket, () => void>();

      const finish = () => {
        if (finished) return;
        finished = true;
        clearTimeout(endTimer);
        clearTimeout(drainTimer);
        for (const [socket, abandon] of live) {
          abandon();
          socket.destroy();
        }
        live.clear();
        const cpu = process.cpuUsage(cpuBefore);
        resolve({
          elapsed: (lastAnswer - started) / 1000,
          statuses,
          histogram,
          cpuSeconds: (cpu.user + cpu.system) / 1e6,
          numbers: [firstNumber, next],
          unsolved: dry.unsolved,
        });
      };
      const connectionDone = () => {
        open -= 1;
        if (open === 0) finish();
      };
      // Answers still missing this long after the end are counted as such (-1), not waited for.
      let drainTimer: NodeJS.Timeout | undefined;
      const endTimer = setTimeout(() => (drainTimer = setTimeout(finish, DRAIN_MS)), seconds * 1000);

      const connect = () => {
        let inFlight: { n: number; sentAt: number } | null = null;
        let closed = false;
        const socket = net.connect({ host: HOST, port, noDelay: true });
        const close = () => {
          closed = true;
          live.delete(socket);
          socket.destroy();
        };
        live.set(socket, () => {
          closed = true;
          if (inFlight) count(-1);
          inFlight = null;
        });

        const send = () => {
          const n = next++;
          const bytes = request(head, n, command.challenge, dry);
          inFlight = { n, sentAt: performance.now() };
          socket.write(bytes, 'latin1');
        };
        const answered = (status: number, closeAfter: boolean) => {
          const at = performance.now();
          lastAnswer = at;
          const request = inFlight!;
          inFlight = null;
          histogram[bucketOf((at - request.sentAt) * 1000)]! += 1;
          count(status);
          if (record && status === 201) markAck(request.n);
          if (at >= stopAt || finished) {
            close();
            connectionDone();
          } else if (closeAfter) {
            close();
            connect();
          } else {
            send();
          }
        };

        socket.on('connect', send);
        const read = responseReader((status, closeAfter) => {
          if (inFlight) answered(status, closeAfter);
        });
        socket.on('data', (chunk: Buffer) => read(chunk));
        // A refused connection or a reset one: its request (if any) counts as status 0.
        const lost = () => {
          if (closed) return;
          close();
          count(0);
          inFlight = null;
          if (performance.now() < stopAt && !finished) setTimeout(connect, 10);
          else connectionDone();
        };
        socket.on('error', lost);
        socket.on('close', lost);
      };

      for (let i = 0; i < connections; i++) connect();
    });
  }

  async function open(command: OpenCommand): Promise<OpenPhaseResult> {
    const head = headOf(command.port);
    const dry = { unsolved: 0 };
    const firstNumber = next;
    const cpuBefore = process.cpuUsage();
    const result = await runOpenLoop(command, {
      next: () => {
        const n = next++;
        return { n, bytes: request(head, n, command.challenge, dry) };
      },
      answered: (n, status) => {
        if (command.record && status === 201) markAck(n);
      },
    });
    const cpu = process.cpuUsage(cpuBefore);
    return { ...result, cpuSeconds: (cpu.user + cpu.system) / 1e6, numbers: [firstNumber, next], unsolved: dry.unsolved };
  }

  return { run, open, writeAcks, fill: pool.fill };
}

// Run as a forked child: serve the parent's commands over IPC.
if (process.send && process.argv[2] === '--serve') {
  const generator = createGenerator({
    prefix: process.env.BENCH_PREFIX ?? 'bench',
    ipv6Share: Number(process.env.BENCH_IPV6_SHARE ?? 0.3),
    emailDomains: parseEmailDomains(process.env.BENCH_EMAIL_DOMAINS),
  });
  const reply = (message: GeneratorReply) => process.send!(message);
  process.on('message', (message: GeneratorMessage) => {
    if (message.type === 'run') void generator.run(message).then((result) => reply({ type: 'result', id: message.id, result }));
    else if (message.type === 'open') void generator.open(message).then((result) => reply({ type: 'open-result', id: message.id, result }));
    else if (message.type === 'fill') {
      generator.fill(message.port, message.size, message.reset).then(
        (result) => reply({ type: 'filled', id: message.id, result }),
        (err: unknown) => reply({ type: 'filled', id: message.id, result: null, error: err instanceof Error ? err.message : String(err) }),
      );
    } else if (message.type === 'acks') reply({ type: 'acks', id: message.id, count: generator.writeAcks(message.file) });
    else process.exit(0);
  });
}
