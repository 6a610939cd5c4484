/**
 * The loop of a worker that drains a durable queue in passes (the mail outbox, webhook deliveries):
 * one pass at a time (each starts after the last one ended), one every `pollIntervalMs`, another at
 * once when a pass took a full batch, and one soon after `wake()` (something was queued here). A
 * pass's errors are logged, never thrown into the timer. `stop()` waits for the pass under way.
 */
export interface PassRunner {
  /** Starts the timer; false when it already runs or was stopped. */
  start(): boolean;
  /** One pass now (after the one under way); resolves to how many items it took. */
  runOnce(): Promise<number>;
  /** A pass soon (once per turn of the event loop, however many call it); nothing before start. */
  wake(): void;
  /** Whether stop() was called: a pass checks it between items. */
  stopping(): boolean;
  stop(): Promise<void>;
}

export interface PassRunnerOptions {
  /** One pass: resolves to how many items it took. */
  pass: () => Promise<number>;
  /** A pass that took this many goes again without waiting for the timer. */
  batchSize: number;
  pollIntervalMs: number;
  log: { error(obj: object, msg: string): void };
  /** What a failed pass is logged as, e.g. 'mail: outbox pass failed'. */
  failure: string;
}

export function createPassRunner({ pass, batchSize, pollIntervalMs, log, failure }: PassRunnerOptions): PassRunner {
  let stopping = false;
  let timer: NodeJS.Timeout | null = null;
  /** The pass under way (or the last one); the next one starts after it. */
  let chain: Promise<number> = Promise.resolve(0);
  let wakePending = false;

  function runOnce(): Promise<number> {
    const next = chain.catch(() => 0).then(pass);
    chain = next.catch((err: unknown) => {
      log.error({ err }, failure);
      return 0;
    });
    return next;
  }

  /** A background pass; its errors are logged (by the chain), never thrown. */
  function tick(): void {
    if (stopping) return;
    void runOnce().then(
      (taken) => {
        // A full batch means more may be due: go on without waiting for the timer.
        if (taken >= batchSize) tick();
      },
      () => undefined,
    );
  }

  return {
    start() {
      if (timer || stopping) return false;
      timer = setInterval(tick, pollIntervalMs);
      timer.unref();
      tick();
      return true;
    },
    runOnce,
    wake() {
      if (stopping || wakePending || !timer) return;
      wakePending = true;
      setImmediate(() => {
        wakePending = false;
        tick();
      });
    },
    stopping: () => stopping,
    async stop() {
      stopping = true;
      if (timer) clearInterval(timer);
      timer = null;
      await chain;
    },
  };
}
