import { strToU8, zipSync, type Zippable } from 'fflate';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { csvRecord, CSV_BOM } from '../../shared/csv.js';
import type { RecordVersion, RecordsBundleQuery } from '../../shared/admin/records-api.js';
import { periodBounds, sha256Hex, versionsInUse } from './versions.js';

/**
 * The examiner's bundle (docs/records.md): one zip with every version in use during a period,
 * each text as served, a manifest (JSON and CSV), SHA-256 checksums of every file (`sha256sum -c
 * SHA256SUMS`) and a README. Built in memory: the texts of a period are a few megabytes at most.
 */

export interface BundleFile {
  path: string;
  sha256: string;
  bytes: number;
}

export interface ManifestVersion {
  id: string;
  kind: RecordVersion['kind'];
  name: string;
  version: number;
  hash: string;
  firstUsedAt: string | null;
  lastUsedAt: string | null;
  useCount: number;
  files: BundleFile[];
}

export interface Manifest {
  period: { from: string; to: string; start: string; end: string };
  generatedAt: string;
  retentionYears: number;
  versions: ManifestVersion[];
}

export const MANIFEST_FILE = 'manifest.json';
export const MANIFEST_CSV_FILE = 'manifest.csv';
export const CHECKSUMS_FILE = 'SHA256SUMS';
export const README_FILE = 'README.txt';

function readme(manifest: Manifest): string {
  const { period } = manifest;
  return `Records of communications: texts in use from ${period.from} to ${period.to} (UTC days, both included)
Generated ${manifest.generatedAt}. ${manifest.versions.length} version(s).

What this is
  Every text a visitor or a recipient of this funding portal's waitlist could be shown or sent
  during the period, exactly as served (17 CFR 227.404): the prerendered web pages, the consent
  statement a signup agreed to, the legends every page and e-mail carries, and each e-mail template
  (subject, plain text and HTML). In e-mail templates, {recipient-token} stands where each
  recipient's own link token went; nothing in this file is personal data.

Files
  ${MANIFEST_FILE}   one entry per version: id, kind, name, version number, hash, first and last use,
                  count of uses, and its files with their SHA-256.
  ${MANIFEST_CSV_FILE}    the same, one row per version, for a spreadsheet.
  texts/<kind>/<name>/v<version>-<hash prefix>/   the text as served, one file per part
                  (page.html; subject.txt, body.txt, body.html; statement.txt; legends.txt).
  ${CHECKSUMS_FILE}       SHA-256 of every other file; check with: sha256sum -c ${CHECKSUMS_FILE}

Reading the manifest
  kind        page (a web page as served), statement (the consent statement), legends (the
              footer's statements), email (an e-mail template)
  version     1 for the first version of that text ever kept, then 2, 3...
  hash        SHA-256 of the version's parts as one JSON object (keys sorted); the id ends with
              its first 16 hex digits
  first/last  when the version was first and last served or sent (UTC); it was in use in between.
              Uses are counted in memory and written about once a minute, so the last minute
              before a server stopped abruptly may be missing from the counts, never a text.
  count       times served or sent, over the version's whole life (not only this period)

A version is listed when its first use is before the end of the period and its last use is not
before its start. Versions are kept at least ${manifest.retentionYears} years after their last use and never changed.
`;
}

function manifestCsv(manifest: Manifest): string {
  let csv = CSV_BOM + csvRecord(['Version id', 'Kind', 'Name', 'Version', 'SHA-256', 'First used', 'Last used', 'Count']);
  for (const v of manifest.versions) {
    csv += csvRecord([v.id, v.kind, v.name, String(v.version), v.hash, v.firstUsedAt ?? '', v.lastUsedAt ?? '', String(v.useCount)]);
  }
  return csv;
}

/** Builds the bundle of the versions in use during `query`'s period: the zip's bytes and its manifest. */
export async function buildRecordsBundle(
  db: Kysely<Database>,
  query: RecordsBundleQuery,
  options: { retentionYears: number; now?: Date },
): Promise<{ zip: Uint8Array; manifest: Manifest }> {
  const now = options.now ?? new Date();
  const { start, end } = periodBounds(query.from, query.to);
  const versions = await versionsInUse(db, start, end);
  const files: Record<string, Uint8Array> = {};
  const add = (path: string, text: string): BundleFile => {
    const data = strToU8(text);
    files[path] = data;
    return { path, sha256: sha256Hex(data), bytes: data.length };
  };

  const manifest: Manifest = {
    period: { from: query.from, to: query.to, start: start.toISOString(), end: end.toISOString() },
    generatedAt: now.toISOString(),
    retentionYears: options.retentionYears,
    versions: versions.map((v) => {
      const folder = `texts/${v.kind}/${v.name}/v${v.number}-${v.hash.slice(0, 16)}`;
      return {
        id: v.id,
        kind: v.kind,
        name: v.name,
        version: v.number,
        hash: v.hash,
        firstUsedAt: v.firstUsedAt,
        lastUsedAt: v.lastUsedAt,
        useCount: v.useCount,
        files: Object.keys(v.parts)
          .sort()
          .map((part) => add(`${folder}/${part}`, v.parts[part]!)),
      };
    }),
  };
  add(MANIFEST_FILE, `${JSON.stringify(manifest, null, 2)}\n`);
  add(MANIFEST_CSV_FILE, manifestCsv(manifest));
  add(README_FILE, readme(manifest));
  const sums = Object.keys(files)
    .sort()
    .map((path) => `${sha256Hex(files[path]!)}  ${path}\n`)
    .join('');
  files[CHECKSUMS_FILE] = strToU8(sums);

  const zippable: Zippable = {};
  for (const [path, data] of Object.entries(files)) zippable[path] = [data, { mtime: now, level: 6 }];
  return { zip: zipSync(zippable), manifest };
}
