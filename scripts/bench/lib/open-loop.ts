/**
 * The signup benchmark's open-loop load (issue 33): `rate` requests per second, evenly spread (the
 * n-th request is due at start + n / rate, whatever the answers before it did), over up to
 * `connections` keep-alive connections, one request in flight on each. A due request goes out on an
 * idle connection, else on a new one while fewer than `connections` are open, else it waits for
 * the first connection to come free. Its latency counts from the moment it was due, not from when
 * it was written, so a server that stalls is charged for the requests that queued behind the stall
 * (no coordinated omission); how late the generator itself wrote them is reported apart
 * (`lateSends`, `maxSendLagMs`), so a busy generator can be told from a slow server.
 *
 * Unlike autocannon's rate option, which releases each second's requests at once (a burst every
 * second), this measures what a visitor waits at a steady rate. Run inside the load generator's
 * process (load-generator.ts), which owns the addresses and the acknowledgements.
 */
import net from 'node:net';
import { bucketOf, emptyHistogram } from './histogram.js';
import { responseReader } from './response-reader.js';

export interface OpenLoopCommand {
  port: number;
  seconds: number;
  /** Requests per second. */
  rate: number;
  /** Most connections open at once. */
  connections: number;
}

export interface OpenLoopResult {
  elapsed: number;
  statuses: Record<string, number>;
  histogram: number[];
  /** Exact slowest answer, ms (from when the request was due). */
  maxMs: number;
  /** Answers that took more than 50 ms. */
  over50ms: number;
  /** Requests written more than 1 ms after they were due (the generator's own lag). */
  lateSends: number;
  maxSendLagMs: number;
  /** Connections opened. */
  connectionsUsed: number;
}

export interface OpenLoopRequests {
  /** The next request's number and its bytes. */
  next(): { n: number; bytes: string };
  /** An answer to request `n` with `status`. */
  answered(n: number, status: number): void;
}

const HOST = '127.0.0.1';
const DRAIN_MS = 30_000;

export function runOpenLoop(command: OpenLoopCommand, requests: OpenLoopRequests): Promise<OpenLoopResult> {
  const { port, seconds, rate, connections } = command;
  const total = Math.max(1, Math.round(seconds * rate));
  const interval = 1000 / rate;
  const histogram = emptyHistogram();
  const statuses: Record<string, number> = {};
  const count = (status: number) => (statuses[status] = (statuses[status] ?? 0) + 1);
  let maxMs = 0;
  let over50ms = 0;
  let lateSends = 0;
  let maxSendLagMs = 0;
  let opened = 0;
  let done = 0;
  const idle: Connection[] = [];
  /** Due times of requests waiting for a free connection. */
  const backlog: number[] = [];
  const all = new Set<Connection>();
  const started = performance.now();
  let lastAnswer = started;

  interface Connection {
    socket: net.Socket;
    inFlight: { n: number; dueAt: number } | null;
    ready: boolean;
  }

  return new Promise((resolve) => {
    let finished = false;
    let tickTimer: NodeJS.Timeout | undefined;
    let drainTimer: NodeJS.Timeout | undefined;
    const finish = () => {
      if (finished) return;
      finished = true;
      clearTimeout(tickTimer);
      clearTimeout(drainTimer);
      for (const c of all) {
        if (c.inFlight) count(-1);
        c.socket.destroy();
      }
      resolve({ elapsed: (lastAnswer - started) / 1000, statuses, histogram, maxMs, over50ms, lateSends, maxSendLagMs, connectionsUsed: opened });
    };
    const settled = () => {
      done += 1;
      if (done >= total) finish();
    };

    const write = (c: Connection, dueAt: number) => {
      const now = performance.now();
      const lag = now - dueAt;
      if (lag > 1) lateSends += 1;
      if (lag > maxSendLagMs) maxSendLagMs = lag;
      const { n, bytes } = requests.next();
      c.inFlight = { n, dueAt };
      c.socket.write(bytes, 'latin1');
    };
    const free = (c: Connection) => {
      const waiting = backlog.shift();
      if (waiting !== undefined) write(c, waiting);
      else idle.push(c);
    };

    const open = (firstDueAt: number) => {
      opened += 1;
      const socket = net.connect({ host: HOST, port, noDelay: true });
      const c: Connection = { socket, inFlight: null, ready: false };
      all.add(c);
      const read = responseReader((status, closeAfter) => {
        const request = c.inFlight;
        if (!request) return;
        c.inFlight = null;
        const at = performance.now();
        lastAnswer = at;
        const ms = at - request.dueAt;
        histogram[bucketOf(ms * 1000)]! += 1;
        if (ms > maxMs) maxMs = ms;
        if (ms > 50) over50ms += 1;
        count(status);
        requests.answered(request.n, status);
        settled();
        if (closeAfter) {
          all.delete(c);
          socket.destroy();
          if (backlog.length > 0) open(backlog.shift()!);
        } else {
          free(c);
        }
      });
      socket.on('connect', () => {
        c.ready = true;
        write(c, firstDueAt);
      });
      socket.on('data', (chunk: Buffer) => read(chunk));
      const lost = () => {
        if (!all.delete(c)) return;
        const i = idle.indexOf(c);
        if (i >= 0) idle.splice(i, 1);
        if (c.inFlight || !c.ready) {
          // Its request (or the one it was opened for) is lost: a connection error.
          c.inFlight = null;
          count(0);
          settled();
        }
      };
      socket.on('error', lost);
      socket.on('close', lost);
    };

    const dispatch = (dueAt: number) => {
      const c = idle.pop();
      if (c) write(c, dueAt);
      else if (all.size < connections) open(dueAt);
      else backlog.push(dueAt);
    };

    let k = 0;
    const tick = () => {
      const now = performance.now();
      while (k < total && started + k * interval <= now) dispatch(started + k++ * interval);
      if (k < total) tickTimer = setTimeout(tick, Math.max(0, started + k * interval - performance.now()));
      else drainTimer = setTimeout(finish, DRAIN_MS);
    };
    tick();
  });
}
