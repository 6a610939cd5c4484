/**
 * A request started before the component that needs it has rendered (a head start of a render or
 * two), taken up once by that component for the same key within `maxAgeMs`. A newer start replaces
 * one never taken; `drop` (the page is left) aborts it. Taken up, it is aborted with the taker's
 * signal.
 */
export class EarlyRequest<T> {
  private pending: { key: string; answer: Promise<T>; controller: AbortController; at: number } | null = null;

  constructor(private readonly maxAgeMs = 5000) {}

  start(key: string, request: (signal: AbortSignal) => Promise<T>): void {
    this.pending?.controller.abort();
    const controller = new AbortController();
    const answer = request(controller.signal);
    // Whoever takes it up sees a failure; until then it is not an unhandled one.
    answer.catch(() => undefined);
    this.pending = { key, answer, controller, at: Date.now() };
  }

  /** Drops a request never taken up, aborting it. */
  drop(): void {
    this.pending?.controller.abort();
    this.pending = null;
  }

  /**
   * The answer started for `key`, once (aborted with `signal`), or null: none was started for it,
   * and one started for another key, or too long ago, is dropped.
   */
  take(key: string, signal: AbortSignal): Promise<T> | null {
    const taken = this.pending;
    this.pending = null;
    if (taken === null) return null;
    if (taken.key !== key || Date.now() - taken.at > this.maxAgeMs) {
      taken.controller.abort();
      return null;
    }
    if (signal.aborted) taken.controller.abort();
    else signal.addEventListener('abort', () => taken.controller.abort(), { once: true });
    return taken.answer;
  }
}
