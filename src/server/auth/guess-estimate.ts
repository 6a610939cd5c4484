import { ZxcvbnFactory } from '@zxcvbn-ts/core';
import * as zxcvbnCommon from '@zxcvbn-ts/language-common';
import * as zxcvbnEn from '@zxcvbn-ts/language-en';

/**
 * The zxcvbn-ts estimate behind the password policy (passwords.ts), on its own: the dictionaries
 * it loads and ranks take about 30 MB of heap, so the server runs this module in a worker thread
 * that ends when it is idle (guess-estimator.ts), and never imports it into its own heap.
 */

/**
 * Only this many leading characters are estimated: the estimate's cost grows fast with length
 * (a 256-character input can block a thread for seconds), and 64 well-chosen characters are
 * strong on their own.
 */
const ESTIMATE_MAX_LENGTH = 64;

let estimator: ZxcvbnFactory | null = null;

/** Built on first use (about half a second, for the dictionaries), then shared. */
function getEstimator(): ZxcvbnFactory {
  estimator ??= new ZxcvbnFactory({
    dictionary: { ...zxcvbnCommon.dictionary, ...zxcvbnEn.dictionary },
    graphs: zxcvbnCommon.adjacencyGraphs,
    translations: zxcvbnEn.translations,
    maxLength: ESTIMATE_MAX_LENGTH,
  });
  return estimator;
}

/** zxcvbn's score (0 to 4) of `password`, with `knownWords` counted as words an attacker tries first. */
export function guessScore(password: string, knownWords: readonly string[]): number {
  return getEstimator().check(password, [...knownWords]).score;
}
