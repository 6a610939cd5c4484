/**
 * When the insight panel loads its numbers. The panel is a set of GROUP BY queries over the whole
 * waitlist: cheap once, costly if every keystroke in the search or every live signup (a few
 * batches a second under load) started one. So:
 * - the first load starts at once (the panel should show within a second of opening /admin);
 * - a new filter waits FILTER_DEBOUNCE_MS of quiet, and aborts the request in flight (its answer
 *   is for a view that is gone);
 * - live updates load again at most once per LIVE_THROTTLE_MS, counted from the last load's start,
 *   and never abort a load in flight: on a big list a query may take longer than the interval, and
 *   restarting it each time would never let one finish. A bump during a load runs one more after it.
 */
export const FILTER_DEBOUNCE_MS = 250;
export const LIVE_THROTTLE_MS = 3000;

export interface RefreshClock {
  now(): number;
  setTimeout(run: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realClock: RefreshClock = {
  now: () => Date.now(),
  setTimeout: (run, ms) => globalThis.setTimeout(run, ms),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof globalThis.setTimeout>),
};

/** Loads the view named `key`; settles when done (an error is the loader's to report). */
export type InsightLoader = (key: string, signal: AbortSignal) => Promise<void>;

export class InsightRefresh {
  private key: string | null = null;
  private inFlight: AbortController | null = null;
  private timer: { handle: unknown; kind: 'filter' | 'live' } | null = null;
  private lastStart = Number.NEGATIVE_INFINITY;
  /** A live bump arrived while a load was running. */
  private liveAfterLoad = false;
  private disposed = false;

  constructor(
    private readonly load: InsightLoader,
    private readonly clock: RefreshClock = realClock,
    private readonly debounceMs = FILTER_DEBOUNCE_MS,
    private readonly throttleMs = LIVE_THROTTLE_MS,
  ) {}

  /** The view's filter, as a canonical key (equal filters, equal keys). */
  setKey(key: string): void {
    if (this.disposed || key === this.key) return;
    const first = this.key === null;
    this.key = key;
    this.abort();
    this.clearTimer();
    this.liveAfterLoad = false;
    if (first) this.start();
    else this.schedule('filter', this.debounceMs);
  }

  /** New signups or changes arrived: the numbers are stale. */
  live(): void {
    if (this.disposed || this.key === null) return;
    // A load for a new filter is already coming, or one for live updates is already planned.
    if (this.timer) return;
    if (this.inFlight) {
      this.liveAfterLoad = true;
      return;
    }
    this.schedule('live', Math.max(0, this.lastStart + this.throttleMs - this.clock.now()));
  }

  /** Load again now (the panel's Try again). */
  retry(): void {
    if (this.disposed || this.key === null) return;
    this.abort();
    this.clearTimer();
    this.liveAfterLoad = false;
    this.start();
  }

  dispose(): void {
    this.disposed = true;
    this.abort();
    this.clearTimer();
  }

  /** Whether a load is running (for tests and the busy state). */
  get loading(): boolean {
    return this.inFlight !== null;
  }

  private start(): void {
    const key = this.key;
    if (this.disposed || key === null) return;
    const controller = new AbortController();
    this.inFlight = controller;
    this.lastStart = this.clock.now();
    const settled = () => {
      // Aborted or overtaken: whoever replaced it decides what comes next.
      if (this.inFlight !== controller) return;
      this.inFlight = null;
      if (this.liveAfterLoad) {
        this.liveAfterLoad = false;
        this.live();
      }
    };
    this.load(key, controller.signal).then(settled, settled);
  }

  private schedule(kind: 'filter' | 'live', ms: number): void {
    this.clearTimer();
    const handle = this.clock.setTimeout(() => {
      if (this.timer?.handle !== handle) return;
      this.timer = null;
      if (kind === 'filter') this.abort();
      this.start();
    }, ms);
    this.timer = { handle, kind };
  }

  private clearTimer(): void {
    if (this.timer) this.clock.clearTimeout(this.timer.handle);
    this.timer = null;
  }

  private abort(): void {
    this.inFlight?.abort();
    this.inFlight = null;
  }
}
