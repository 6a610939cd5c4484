import { describe, expect, it } from 'vitest';
import { parseWaitlistEvent, retryDelay } from './useLiveWaitlist.js';

describe('live updates', () => {
  it('backs off exponentially with jitter, capped at 30 s', () => {
    expect(retryDelay(0, 0)).toBe(500);
    expect(retryDelay(0, 1)).toBe(1000);
    expect(retryDelay(3, 1)).toBe(8000);
    expect(retryDelay(20, 1)).toBe(30_000);
    expect(retryDelay(20, 0)).toBe(15_000);
  });

  it('reads the contract events and ignores anything else', () => {
    expect(parseWaitlistEvent({ event: 'ready', data: '{"asOf":"2026-11-25T10:00:00.000Z"}' })).toEqual({ type: 'ready', data: { asOf: '2026-11-25T10:00:00.000Z' } });
    expect(parseWaitlistEvent({ event: 'change', data: '{"reason":"deleted"}' })).toEqual({ type: 'change', data: { reason: 'deleted' } });
    expect(parseWaitlistEvent({ event: 'change', data: '{"reason":"exploded"}' })).toBeNull();
    expect(parseWaitlistEvent({ event: 'signup', data: 'not json' })).toBeNull();
    expect(parseWaitlistEvent({ event: 'other', data: '{}' })).toBeNull();
    expect(parseWaitlistEvent({ data: '{}' })).toBeNull();
  });
});
