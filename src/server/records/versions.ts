import { createHash } from 'node:crypto';
import { sql, type Kysely, type Selectable } from 'kysely';
import { isPostgres, parseJsonObject, toIsoTimestamp } from '../db/database.js';
import type { Database, RecordsVersionsTable } from '../db/schema.js';
import type { RecordKind, RecordVersion, RecordVersionSummary } from '../../shared/admin/records-api.js';

/**
 * The kept versions' SQL (docs/decisions/055): a text is stored once, by its content, the first
 * time it is used; after that only its use (first, last, count) is written, which a trigger of the
 * migration enforces; it is deleted only RECORDS_RETENTION_YEARS after its last use.
 */
type Db = Kysely<Database>;

/** A version's text: part name → the text as served (`page.html`; `subject.txt`, `body.txt`, `body.html`…). */
export type VersionParts = Record<string, string>;

export interface NewVersion {
  kind: RecordKind;
  name: string;
  parts: VersionParts;
}

/** The parts as one JSON text, keys sorted: what the hash is over and what is stored. */
export function canonicalParts(parts: VersionParts): string {
  return JSON.stringify(Object.fromEntries(Object.keys(parts).sort().map((key) => [key, parts[key]!])));
}

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** The content-derived id and hash of a version: the same text has the same id on every instance. */
export function identify(version: NewVersion): { id: string; hash: string; json: string } {
  const json = canonicalParts(version.parts);
  const hash = sha256Hex(json);
  return { id: `${version.kind}:${version.name}@${hash.slice(0, 16)}`, hash, json };
}

/** Stores a version unless it is stored already (by any instance); resolves to its id. */
export async function storeVersion(db: Db, version: NewVersion, now: Date = new Date()): Promise<string> {
  const { id, hash, json } = identify(version);
  await db
    .insertInto('records_versions')
    .values({ id, kind: version.kind, name: version.name, hash, parts: json, created_at: now.toISOString() })
    .onConflict((oc) => oc.doNothing())
    .execute();
  return id;
}

/** Uses of one version since the last flush: the first and last (ms since the epoch) and how many. */
export interface Uses {
  first: number;
  last: number;
  count: number;
}

/** Adds uses counted in memory (usage.ts) to the stored versions: one UPDATE per version used. */
export async function addUses(db: Db, uses: ReadonlyMap<string, Uses>): Promise<void> {
  if (uses.size === 0) return;
  const at = isPostgres(db) ? (ms: number) => sql`${new Date(ms).toISOString()}::timestamptz` : (ms: number) => sql`${new Date(ms).toISOString()}`;
  await db.transaction().execute(async (trx) => {
    for (const [id, use] of uses) {
      await sql`
        UPDATE records_versions SET
          first_used_at = CASE WHEN first_used_at IS NULL OR first_used_at > ${at(use.first)} THEN ${at(use.first)} ELSE first_used_at END,
          last_used_at = CASE WHEN last_used_at IS NULL OR last_used_at < ${at(use.last)} THEN ${at(use.last)} ELSE last_used_at END,
          use_count = use_count + ${use.count}
        WHERE id = ${id}`.execute(trx);
    }
  });
}

type Row = Selectable<RecordsVersionsTable>;

const optionalTime = (value: Date | string | null) => (value === null ? null : toIsoTimestamp(value));

/** Rows (oldest first within a kind and name) numbered 1, 2, 3… within their kind and name. */
function numbered(rows: readonly Omit<Row, 'parts'>[]): RecordVersionSummary[] {
  const counts = new Map<string, number>();
  return rows.map((r) => {
    const key = `${r.kind}/${r.name}`;
    const number = (counts.get(key) ?? 0) + 1;
    counts.set(key, number);
    return {
      id: r.id,
      kind: r.kind,
      name: r.name,
      number,
      hash: r.hash,
      createdAt: toIsoTimestamp(r.created_at),
      firstUsedAt: optionalTime(r.first_used_at),
      lastUsedAt: optionalTime(r.last_used_at),
      useCount: Number(r.use_count),
    };
  });
}

const SUMMARY_COLUMNS = ['id', 'kind', 'name', 'hash', 'created_at', 'first_used_at', 'last_used_at', 'use_count'] as const;

/**
 * Every kept version without its text, by kind and name, oldest first (the order its number
 * follows): by when it was stored, then (stored in the same millisecond by two instances) by its first use.
 */
export async function listVersions(db: Db): Promise<RecordVersionSummary[]> {
  const rows = await db.selectFrom('records_versions').select(SUMMARY_COLUMNS).execute();
  const time = (value: Date | string | null) => (value === null ? Infinity : Date.parse(toIsoTimestamp(value)));
  const order = (a: (typeof rows)[number], b: (typeof rows)[number]) =>
    compare(a.kind, b.kind) || compare(a.name, b.name) || time(a.created_at) - time(b.created_at) || time(a.first_used_at) - time(b.first_used_at) || compare(a.id, b.id);
  return numbered(rows.sort(order));
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** One version with its text, or undefined. */
export async function findVersion(db: Db, id: string): Promise<RecordVersion | undefined> {
  const versions = await findVersions(db, [id]);
  return versions[0];
}

/** The versions of `ids` with their texts (numbered among all versions of their kind and name). */
export async function findVersions(db: Db, ids: readonly string[]): Promise<RecordVersion[]> {
  if (ids.length === 0) return [];
  const all = await listVersions(db);
  const wanted = all.filter((v) => ids.includes(v.id));
  if (wanted.length === 0) return [];
  const texts = await db.selectFrom('records_versions').select(['id', 'parts']).where('id', 'in', wanted.map((v) => v.id)).execute();
  const partsOf = new Map(texts.map((t) => [t.id, parseJsonObject(t.parts)]));
  return wanted.map((v) => {
    const parts: Record<string, string> = {};
    for (const [name, text] of Object.entries(partsOf.get(v.id) ?? {})) if (typeof text === 'string') parts[name] = text;
    return { ...v, parts };
  });
}

/** The start of `day` (YYYY-MM-DD, UTC) and of the day after `to`: the period's half-open bounds. */
export function periodBounds(from: string, to: string): { start: Date; end: Date } {
  const start = new Date(`${from}T00:00:00.000Z`);
  const end = new Date(`${to}T00:00:00.000Z`);
  end.setUTCDate(end.getUTCDate() + 1);
  return { start, end };
}

/** Every version in use during [start, end): first used before the end, last used at or after the start. */
export async function versionsInUse(db: Db, start: Date, end: Date): Promise<RecordVersion[]> {
  const ids = await db
    .selectFrom('records_versions')
    .select('id')
    .where('first_used_at', '<', end.toISOString())
    .where('last_used_at', '>=', start.toISOString())
    .execute();
  return findVersions(
    db,
    ids.map((r) => r.id),
  );
}

/** The instant before which a version's last use must lie for it to be deleted. */
export function retentionCutoff(now: Date, retentionYears: number): Date {
  const cutoff = new Date(now.getTime());
  cutoff.setUTCFullYear(cutoff.getUTCFullYear() - retentionYears);
  return cutoff;
}

/**
 * Deletes what the retention lets go, and nothing else: a version whose last use (or, never used,
 * whose storing) is more than `retentionYears` before `now`, and that no kept e-mail send and no
 * signup's consent record still names. First, the send records of entries that are gone (erased
 * or deleted: a person's sends are kept as long as their entry), and the consent records no entry
 * names any more whose versions have all expired. Resolves to how many versions were deleted.
 */
export async function purgeExpiredVersions(db: Db, retentionYears: number, now: Date = new Date()): Promise<number> {
  const cutoff = retentionCutoff(now, retentionYears).toISOString();
  return db.transaction().execute(async (trx) => {
    await sql`
      DELETE FROM records_mail_sends
      WHERE entry_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM waitlist w WHERE w.id = records_mail_sends.entry_id)`.execute(trx);
    await sql`
      DELETE FROM records_consents
      WHERE created_at < ${cutoff}
        AND NOT EXISTS (SELECT 1 FROM waitlist w WHERE w.consent_record = records_consents.id)
        AND NOT EXISTS (
          SELECT 1 FROM records_versions v
          WHERE v.id IN (records_consents.page_version, records_consents.statement_version, records_consents.legends_version)
            AND coalesce(v.last_used_at, v.created_at) >= ${cutoff}
        )`.execute(trx);
    const result = await sql`
      DELETE FROM records_versions
      WHERE coalesce(last_used_at, created_at) < ${cutoff}
        AND id NOT IN (SELECT version_id FROM records_mail_sends)
        AND id NOT IN (SELECT page_version FROM records_consents WHERE page_version IS NOT NULL)
        AND id NOT IN (SELECT statement_version FROM records_consents)
        AND id NOT IN (SELECT legends_version FROM records_consents)`.execute(trx);
    return Number(result.numAffectedRows ?? 0n);
  });
}
