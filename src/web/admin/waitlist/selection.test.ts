import { describe, expect, it } from 'vitest';
import { Selection } from './selection.js';

describe('Selection', () => {
  it('toggles in place and bumps its version only on real changes', () => {
    const selection = new Selection();
    let notified = 0;
    const unsubscribe = selection.subscribe(() => (notified += 1));
    selection.toggle('a');
    selection.toggle('b', true);
    selection.toggle('b', true);
    expect(selection.size).toBe(2);
    expect(selection.has('a')).toBe(true);
    selection.toggle('a');
    expect(selection.has('a')).toBe(false);
    expect(notified).toBe(3);
    expect(selection.getVersion()).toBe(3);
    unsubscribe();
    selection.toggle('c');
    expect(notified).toBe(3);
  });

  it('selects, toggles and clears 100,000 ids', () => {
    const ids = Array.from({ length: 100_000 }, (_, i) => `id-${i}`);
    const selection = new Selection();
    selection.setAll(ids);
    expect(selection.size).toBe(100_000);
    for (let i = 0; i < 1000; i += 1) selection.toggle(`id-${i}`);
    expect(selection.size).toBe(99_000);
    selection.clear();
    expect(selection.size).toBe(0);
  });

  it('forgets removed ids', () => {
    const selection = new Selection();
    selection.setAll(['a', 'b', 'c']);
    selection.remove(['a', 'x']);
    expect(selection.toArray().sort()).toEqual(['b', 'c']);
  });
});

describe('Selection: select-all of every match', () => {
  const at = (minute: number) => new Date(Date.UTC(2026, 10, 25, 10, minute)).toISOString();
  const row = (id: string, minute: number) => ({ id, created_at: at(minute) });

  it('selects a million matches at once, counts the unticked out, and names itself as filter + except', () => {
    const selection = new Selection();
    selection.selectMatching({ q: '@example.com', country: '' }, at(30), 1_000_000);
    expect(selection.mode).toBe('matching');
    expect(selection.size).toBe(1_000_000);
    expect(selection.isSelected(row('a', 10))).toBe(true);
    selection.toggle('a');
    selection.toggle('b', false);
    expect(selection.size).toBe(999_998);
    expect(selection.isSelected(row('a', 10))).toBe(false);
    expect(selection.toRequest()).toEqual({ filter: { q: '@example.com', until: at(30) }, except: ['a', 'b'] });
    selection.toggle('a', true);
    expect(selection.size).toBe(999_999);
    expect(selection.toArray()).toEqual([]);
  });

  it('does not cover rows that joined after its `until`, until one of them is ticked', () => {
    const selection = new Selection();
    selection.selectMatching({}, at(30), 10);
    const live = [row('n2', 32), row('n1', 31)];
    expect(selection.covers(live[0]!)).toBe(false);
    expect(selection.isSelected(live[0]!)).toBe(false);
    // Ticking the older live row moves `until` to it: that row is in, the newer one still out.
    selection.extendMatching(live[1]!.created_at, ['n1'], 'n1');
    expect(selection.size).toBe(11);
    expect(selection.isSelected(live[1]!)).toBe(true);
    expect(selection.isSelected(live[0]!)).toBe(false);
    // Ticking the newest covers it too (the rows not yet covered are passed); n1, unticked meanwhile, stays out.
    selection.toggle('n1', false);
    expect(selection.size).toBe(10);
    selection.extendMatching(live[0]!.created_at, ['n2'], 'n2');
    expect(selection.size).toBe(11);
    expect(selection.toRequest()).toEqual({ filter: { until: at(32) }, except: ['n1'] });
  });

  it('goes back to ticked ids on setAll and clears either mode', () => {
    const selection = new Selection();
    selection.selectMatching({}, at(0), 5);
    selection.setAll(['x']);
    expect(selection.mode).toBe('ids');
    expect(selection.toRequest()).toEqual({ ids: ['x'] });
    selection.selectMatching({}, at(0), 5);
    const before = selection.getVersion();
    selection.clear();
    expect(selection.size).toBe(0);
    expect(selection.mode).toBe('ids');
    expect(selection.getVersion()).toBe(before + 1);
  });
});
