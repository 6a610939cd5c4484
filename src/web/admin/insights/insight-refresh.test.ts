import { describe, expect, it } from 'vitest';
import { InsightRefresh, type RefreshClock } from './insight-refresh.js';

/** A clock whose time moves only when told, firing due timers in order. */
class ManualClock implements RefreshClock {
  time = 0;
  private timers = new Map<number, { at: number; run: () => void }>();
  private nextId = 1;
  now() {
    return this.time;
  }
  setTimeout(run: () => void, ms: number) {
    const id = this.nextId++;
    this.timers.set(id, { at: this.time + ms, run });
    return id;
  }
  clearTimeout(handle: unknown) {
    this.timers.delete(handle as number);
  }
  advance(ms: number) {
    const end = this.time + ms;
    for (;;) {
      const due = [...this.timers.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.time = due[1].at;
      due[1].run();
    }
    this.time = end;
  }
}

/** A loader whose loads finish when the test says so. */
function recordingLoader() {
  const loads: Array<{ key: string; signal: AbortSignal; finish: () => void }> = [];
  const load = (key: string, signal: AbortSignal) =>
    new Promise<void>((resolve) => {
      loads.push({ key, signal, finish: resolve });
    });
  return { loads, load };
}

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('InsightRefresh', () => {
  it('loads at once on opening, then waits for a quiet moment after filter changes and aborts the old request', () => {
    const clock = new ManualClock();
    const { loads, load } = recordingLoader();
    const refresh = new InsightRefresh(load, clock, 250, 3000);
    refresh.setKey('');
    expect(loads.map((l) => l.key)).toEqual(['']);

    refresh.setKey('q=a');
    expect(loads[0]?.signal.aborted).toBe(true);
    clock.advance(100);
    refresh.setKey('q=ab');
    clock.advance(249);
    expect(loads).toHaveLength(1);
    clock.advance(1);
    expect(loads.map((l) => l.key)).toEqual(['', 'q=ab']);
    expect(loads[1]?.signal.aborted).toBe(false);

    // The same filter again is no change.
    refresh.setKey('q=ab');
    clock.advance(1000);
    expect(loads).toHaveLength(2);
    refresh.dispose();
    expect(loads[1]?.signal.aborted).toBe(true);
  });

  it('reloads for live updates at most once per interval, and never aborts a load for them', async () => {
    const clock = new ManualClock();
    const { loads, load } = recordingLoader();
    const refresh = new InsightRefresh(load, clock, 250, 3000);
    refresh.setKey('country=Germany');
    clock.advance(500);
    loads[0]?.finish();
    await flush();

    // Bumps during the interval since the first load's start make one load when it has passed.
    refresh.live();
    refresh.live();
    clock.advance(2499);
    expect(loads).toHaveLength(1);
    clock.advance(1);
    expect(loads.map((l) => l.key)).toEqual(['country=Germany', 'country=Germany']);

    // A bump while that load runs waits for it, and then for the interval from its start.
    refresh.live();
    refresh.live();
    clock.advance(4000);
    expect(loads).toHaveLength(2);
    expect(loads[1]?.signal.aborted).toBe(false);
    loads[1]?.finish();
    await flush();
    clock.advance(0);
    expect(loads).toHaveLength(3);

    // Long after the last load, a bump loads at once.
    loads[2]?.finish();
    await flush();
    clock.advance(10_000);
    refresh.live();
    clock.advance(0);
    expect(loads).toHaveLength(4);
    refresh.dispose();
  });

  it('lets a filter change take over from a planned live reload, and retries at once', async () => {
    const clock = new ManualClock();
    const { loads, load } = recordingLoader();
    const refresh = new InsightRefresh(load, clock, 250, 3000);
    refresh.setKey('');
    loads[0]?.finish();
    await flush();
    refresh.live();
    refresh.setKey('source=(none)');
    clock.advance(250);
    expect(loads.map((l) => l.key)).toEqual(['', 'source=(none)']);
    // A live bump while the filter's debounce is pending adds nothing.
    refresh.setKey('source=x');
    refresh.live();
    clock.advance(250);
    expect(loads.map((l) => l.key)).toEqual(['', 'source=(none)', 'source=x']);
    expect(loads[1]?.signal.aborted).toBe(true);

    refresh.retry();
    expect(loads[2]?.signal.aborted).toBe(true);
    expect(loads.map((l) => l.key)).toEqual(['', 'source=(none)', 'source=x', 'source=x']);
    refresh.dispose();
    refresh.live();
    refresh.setKey('q=z');
    clock.advance(10_000);
    expect(loads).toHaveLength(4);
  });
});
