import { useState, useSyncExternalStore } from 'react';

/**
 * The ticked rows, as a Set of entry ids that is mutated in place: a toggle is O(1) however many
 * rows there are, and the component re-renders through a version number instead of a copied Set.
 */
export class Selection {
  private ids = new Set<string>();
  private version = 0;
  private readonly listeners = new Set<() => void>();

  get size(): number {
    return this.ids.size;
  }

  has(id: string): boolean {
    return this.ids.has(id);
  }

  /** A copy of the selected ids, for a request body. */
  toArray(): string[] {
    return Array.from(this.ids);
  }

  toggle(id: string, selected = !this.ids.has(id)): void {
    if (selected === this.ids.has(id)) return;
    if (selected) this.ids.add(id);
    else this.ids.delete(id);
    this.changed();
  }

  /** Selects exactly these ids (select-all). */
  setAll(ids: Iterable<string>): void {
    this.ids = new Set(ids);
    this.changed();
  }

  clear(): void {
    if (this.ids.size === 0) return;
    this.ids = new Set();
    this.changed();
  }

  /** Forgets ids whose rows no longer exist. */
  remove(ids: Iterable<string>): void {
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
