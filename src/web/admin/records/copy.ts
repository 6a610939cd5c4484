/** The Records area's texts (issue 30; beside the specification). */
import type { RecordKind } from '../../../shared/admin/records-api.js';

export const recordsTexts = {
  heading: 'Records',
  intro: (years: number) =>
    `Every version of every text a visitor or recipient was shown or sent, kept unchanged for at least ${years} years after its last use.`,
  loading: 'Loading records',
  loadFailed: 'The records could not be loaded.',
  tryAgain: 'Try again',
  kinds: { page: 'Pages', statement: 'Consent statement', legends: 'Legends', email: 'E-mail templates' } satisfies Record<RecordKind, string>,
  columns: { version: 'Version', hash: 'SHA-256', firstUsed: 'First used', lastUsed: 'Last used', uses: 'Uses' },
  neverUsed: 'not yet',
  bundle: {
    heading: "Examiner's bundle",
    from: 'From (UTC day)',
    to: 'To (UTC day)',
    button: 'Download bundle',
    busy: 'Preparing...',
    failed: 'The bundle could not be made',
    badPeriod: 'Choose a start day that is not after the end day.',
  },
  compare: {
    heading: 'Compare two versions',
    text: 'Text',
    left: 'Older version',
    right: 'Newer version',
    button: 'Show differences',
    busy: 'Loading...',
    onlyOne: 'Each text below has a single version so far: nothing to compare.',
    same: 'These two versions are the same.',
    failed: 'The versions could not be loaded',
    legend: 'Removed lines are marked − on the left, added lines + on the right.',
    removed: 'removed',
    added: 'added',
  },
};

/** `v2 · 2026-11-29 05:12 UTC`. */
export function versionLabel(version: { number: number; createdAt: string }): string {
  return `v${version.number} · stored ${formatUtc(version.createdAt)}`;
}

export function formatUtc(iso: string | null): string {
  return iso === null ? recordsTexts.neverUsed : `${iso.slice(0, 16).replace('T', ' ')} UTC`;
}
