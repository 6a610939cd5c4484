import { afterAll, describe, expect, it } from 'vitest';
import { guessScore } from '../../../src/server/auth/guess-estimate.js';
import { estimateGuessScore, guessEstimatorRunning, stopGuessEstimator } from '../../../src/server/auth/guess-estimator.js';

/** The password estimate's worker thread (guess-estimator.ts) against the same estimate run here. */
const PASSWORDS = ['Summer2024!!', 'correct-Horse-battery-42', 'qwertyuiopasdf', 'Jane.Doe.Waitlist', 'ochre-Lantern-quiet-77', 'aaaaaaaaaaaa'];
const KNOWN = ['waitlist', 'jane.doe@example.com', 'jane', 'doe'];

describe('password estimate thread', () => {
  afterAll(() => stopGuessEstimator({ idleMs: 60_000 }));

  it('answers what the estimate gives in this thread, for estimates sent together', async () => {
    const scores = await Promise.all(PASSWORDS.map((p) => estimateGuessScore(p, KNOWN)));
    expect(scores).toEqual(PASSWORDS.map((p) => guessScore(p, KNOWN)));
    expect(new Set(scores).size).toBeGreaterThan(1);
  });

  it('ends when idle, and starts again for the next estimate', async () => {
    stopGuessEstimator({ idleMs: 50 });
    await estimateGuessScore('Summer2024!!', []);
    expect(guessEstimatorRunning()).toBe(true);
    await expect.poll(() => guessEstimatorRunning(), { timeout: 10_000 }).toBe(false);
    expect(await estimateGuessScore('correct-Horse-battery-42', [])).toBe(guessScore('correct-Horse-battery-42', []));
  });

  it('finishes the estimates a lost thread had not answered', async () => {
    stopGuessEstimator({ idleMs: 60_000 });
    const waiting = PASSWORDS.map((p) => estimateGuessScore(p, KNOWN));
    stopGuessEstimator();
    expect(await Promise.all(waiting)).toEqual(PASSWORDS.map((p) => guessScore(p, KNOWN)));
  });
});
