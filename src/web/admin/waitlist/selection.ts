import { useState, useSyncExternalStore } from 'react';
import { compactFilter, type WaitlistFilter } from '../../../shared/admin/waitlist-filter.js';
import type { WaitlistEntry } from '../../../shared/waitlist/entry.js';

/** What a row needs for the selection to tell whether it is ticked. */
export type SelectableEntry = Pick<WaitlistEntry, 'id' | 'created_at'>;

/** A selection as a request body: named ids, or every entry matching a filter but `except`. */
export type SelectionRequest = { ids: string[] } | { filter: WaitlistFilter; except: string[] };

interface MatchingSnapshot {
  /** The view's filter, with `until` set to the instant the view was counted at. */
  filter: WaitlistFilter;
  untilMs: number;
  /** How many entries matched the view at that instant (the count line's number then). */
  count: number;
}

/**
 * The ticked rows, in one of two modes:
 * - 'ids': the rows ticked one by one, as a Set of ids;
 * - 'matching': select-all of a view, which covers every entry matching the view's filter that had
 *   joined by the view's `until` (loaded or not), minus a Set of unticked ids (`except`). Selecting a
 *   million entries is then O(1): nothing is built per entry.
 *
 * The Set is mutated in place (a toggle is O(1) however many rows there are) and the component
 * re-renders through a version number instead of a copied Set.
 */
export class Selection {
  /** 'ids': the ticked ids; 'matching': the unticked ones (`except`). */
  private ids = new Set<string>();
  private matching: MatchingSnapshot | null = null;
  private version = 0;
  private readonly listeners = new Set<() => void>();

  /** How many entries are selected (for 'matching': the count of the view minus the unticked). */
  get size(): number {
    return this.matching ? Math.max(0, this.matching.count - this.ids.size) : this.ids.size;
  }

  get mode(): 'ids' | 'matching' {
    return this.matching ? 'matching' : 'ids';
  }

  /** Whether the select-all covers this entry (it had joined by the view's `until`); false in 'ids' mode. */
  covers(entry: SelectableEntry): boolean {
    return this.matching !== null && Date.parse(entry.created_at) <= this.matching.untilMs;
  }

  /** Whether the row is ticked. */
  isSelected(entry: SelectableEntry): boolean {
    if (!this.matching) return this.ids.has(entry.id);
    return this.covers(entry) && !this.ids.has(entry.id);
  }

  /** 'ids' mode: whether the id is ticked; 'matching' mode: whether it is not unticked. */
  has(id: string): boolean {
    return this.matching ? !this.ids.has(id) : this.ids.has(id);
  }

  /** A copy of the ticked ids ('ids' mode; empty in 'matching' mode, which names no ids). */
  toArray(): string[] {
    return this.matching ? [] : Array.from(this.ids);
  }

  /** The request body that names this selection. */
  toRequest(): SelectionRequest {
    if (this.matching) return { filter: { ...this.matching.filter }, except: Array.from(this.ids) };
    return { ids: Array.from(this.ids) };
  }

  /** Ticks or unticks a row ('matching' mode: a row the select-all covers, see `covers`). */
  toggle(id: string, selected = !this.has(id)): void {
    if (selected === this.has(id)) return;
    // In 'matching' mode the Set holds the unticked rows: ticking removes from it.
    if (selected === !this.matching) this.ids.add(id);
    else this.ids.delete(id);
    this.changed();
  }

  /** Selects exactly these ids ('ids' mode). */
  setAll(ids: Iterable<string>): void {
    this.matching = null;
    this.ids = new Set(ids);
    this.changed();
  }

  /**
   * Select-all of a view: every entry matching `filter` that joined by `until` (the instant the
   * view's `count` was taken), loaded or not.
   */
  selectMatching(filter: WaitlistFilter, until: string, count: number): void {
    this.matching = { filter: { ...compactFilter(filter), until }, untilMs: Date.parse(until), count };
    this.ids = new Set();
    this.changed();
  }

  /**
   * Ticks a row that joined after the select-all's `until` (it arrived live): the select-all is
   * moved on to `until` and covers the entries shown in between (`newer`, all matching the filter),
   * unticked but for `tickedId`.
   */
  extendMatching(until: string, newer: readonly string[], tickedId: string): void {
    const matching = this.matching;
    if (!matching) return;
    matching.filter = { ...matching.filter, until };
    matching.untilMs = Date.parse(until);
    matching.count += newer.length;
    for (const id of newer) if (id !== tickedId) this.ids.add(id);
    this.changed();
  }

  clear(): void {
    if (this.ids.size === 0 && !this.matching) return;
    this.matching = null;
    this.ids = new Set();
    this.changed();
  }

  /** Forgets ticked ids whose rows no longer exist ('ids' mode; a select-all is cleared after its own delete instead). */
  remove(ids: Iterable<string>): void {
    if (this.matching) return;
    let removed = false;
    for (const id of ids) removed = this.ids.delete(id) || removed;
    if (removed) this.changed();
  }

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  readonly getVersion = (): number => this.version;

  private changed(): void {
    this.version += 1;
    for (const listener of this.listeners) listener();
  }
}

/** One Selection for the component's lifetime, plus its version so renders follow its changes. */
export function useSelection(): { selection: Selection; version: number } {
  const [selection] = useState(() => new Selection());
  const version = useSyncExternalStore(selection.subscribe, selection.getVersion, selection.getVersion);
  return { selection, version };
}
