import { ZxcvbnFactory } from '@zxcvbn-ts/core';
import * as zxcvbnCommon from '@zxcvbn-ts/language-common';
import * as zxcvbnEn from '@zxcvbn-ts/language-en';
import breachedPasswords from 'fxa-common-password-list';

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

/**
 * Whether `password` (any case) is one of the most common breached passwords (ASVS 2.1.7): Mozilla's
 * fxa-common-password-list, the 50,000 most frequent passwords of at least 8 characters in Mark
 * Burnett's 10-million-password set of leaked credentials (SecLists), checked offline. zxcvbn's own
 * common list comes from the same set but leaves out what its patterns rate cheaply, and a listed
 * password can still reach score 4 (`perasperaadastra`, keyboard-shifted words such as `ytpfdbcbvjcnm`).
 */
export function isBreachedPassword(password: string): boolean {
  return breachedPasswords.test(password.toLowerCase());
}

/**
 * zxcvbn's score (0 to 4) of `password`, with `knownWords` counted as words an attacker tries first;
 * 0 for a breached password (it is in the lists attackers try first, whatever its estimate).
 */
export function guessScore(password: string, knownWords: readonly string[]): number {
  if (isBreachedPassword(password)) return 0;
  return getEstimator().check(password, [...knownWords]).score;
}
