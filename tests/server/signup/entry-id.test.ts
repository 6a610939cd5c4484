import { describe, expect, it } from 'vitest';
import { newEntryId } from '../../../src/server/signup/entry-id.js';

describe('newEntryId', () => {
  it('is a version-7 UUID whose first 48 bits are the time in milliseconds', () => {
    const at = Date.parse('2026-11-29T10:00:00.123Z');
    const id = newEntryId(at);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(at);
  });

  it('sorts by time across milliseconds, and ids of the same millisecond differ', () => {
    const at = Date.parse('2026-11-29T10:00:00.000Z');
    const inOrder = [at, at + 1, at + 1000, at + 86_400_000].map((ms) => newEntryId(ms));
    expect([...inOrder].reverse().sort()).toEqual(inOrder);
    expect(new Set(Array.from({ length: 1000 }, () => newEntryId(at))).size).toBe(1000);
  });
});
