import { sql, type Expression, type ExpressionBuilder, type Kysely, type SqlBool } from 'kysely';
import { isPostgres } from './database.js';
import type { Database } from './schema.js';
import { isEmptyFilter, NONE_VALUE, searchDomain, type WaitlistFilter } from '../../shared/admin/waitlist-filter.js';

/**
 * The admin's filter (src/shared/admin/waitlist-filter.ts) as SQL, applied by the database. Every
 * query on a selection (the list's pages and counts, the insight panel, the export, a select-all's
 * delete and invite) builds its WHERE from `matching`, so they all agree on what "matching" means.
 * The same queries run on SQLite and PostgreSQL.
 */

/** Text for a LIKE pattern: `%`, `_` and the escape character itself stand for themselves. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

const DAY_MS = 86_400_000;

/** The UTC day after `day` (YYYY-MM-DD), or null after 9999-12-31 (nothing can be later). */
export function dayAfter(day: string): string | null {
  const next = new Date(Date.parse(`${day}T00:00:00.000Z`) + DAY_MS);
  return next.getUTCFullYear() > 9999 ? null : next.toISOString().slice(0, 10);
}

/**
 * The start of a UTC day as the created_at column compares it: SQLite compares the stored ISO text
 * (always `YYYY-MM-DDTHH:MM:SS.sssZ`), PostgreSQL parses the same text as a timestamptz.
 */
const dayStart = (day: string) => `${day}T00:00:00.000Z`;

/**
 * `until` as the column compares it. SQLite compares text, so the instant is rewritten with exactly
 * three decimals like the stored values (`…:00Z` would sort after `…:00.500Z`); PostgreSQL parses it
 * and keeps any microseconds. The route has checked that it is a real instant.
 */
function untilBound(db: Kysely<Database>, until: string): string {
  return isPostgres(db) ? until : new Date(until).toISOString();
}

/**
 * The text after the last `@` of lower(email) (NULL without one), written exactly as the domain index has it
 * (migration 2026-11-27T0700; SQLite uses an expression index only for the same text).
 */
function emailDomain(db: Kysely<Database>) {
  return isPostgres(db)
    ? sql<string | null>`CASE WHEN strpos(email, '@') > 0 THEN reverse(split_part(reverse(lower(email)), '@', 1)) END`
    : sql<string | null>`substr(lower(email), nullif(length(rtrim(lower(email), replace(lower(email), '@', ''))), 0) + 1)`;
}

export type WaitlistExpressionBuilder = ExpressionBuilder<Database, 'waitlist'>;

/**
 * The list's id as the queries compare it (issue 31): the constant 0 for the portal's waitlist (no
 * filter.list, or `portal`), else a scalar subquery on the lists' unique slug, which both databases
 * evaluate once and use as an index key. Every waitlist index leads with list_id (migration
 * 2026-11-29T0900), so a list's pages, counts and GROUP BYs read only its own range.
 */
export function listIdOf(filter: Pick<WaitlistFilter, 'list'>): Expression<number> {
  return !filter.list || filter.list === 'portal' ? sql<number>`${sql.lit(0)}` : sql<number>`(SELECT id FROM lists WHERE slug = ${filter.list})`;
}

/**
 * How a search that is not a domain search (those read the domain index: emailDomain) is written on
 * SQLite (PostgreSQL always tests `lower(email) LIKE` per row: its planner weighs a parallel scan
 * against the created_at index with its statistics).
 *
 * - `rowids` (default): the matching rows are found once by a scan of the lower(email) index (the
 *   unique index every table has; small, and it holds the rowid) and the rest of the query only
 *   checks membership (`+rowid IN (…)`: the `+` keeps SQLite from turning the list into row
 *   lookups plus a sort). A page then walks the created_at index (or a filter's index) without
 *   reading a table row per entry it skips: at 1,000,000 entries a rare search's page drops from a
 *   read of the whole table (about 0.6 s of CPU) to about 0.15-0.3 s, a GROUP BY with a search
 *   from ~2.8 s (a table read per row of its index) to ~0.5 s.
 * - `inline`: `lower(email) LIKE` per row, for a plain count (which then reads the lower(email)
 *   index alone) and for the keyset batches of an export, delete or invite (one pass over the list
 *   in all; the subquery would be scanned again for every batch).
 */
export type SearchForm = 'rowids' | 'inline';

/**
 * The filter as a WHERE condition (`1 = 1` for an empty filter), for `.where(matching(db, filter))`.
 *
 * - `q`: `lower(email) LIKE '%term%'` with LIKE's wildcards in the text escaped, so `_` and `%` match
 *   themselves; a domain search (`@domain`) is the domain index's key (emailDomain) equal to the
 *   domain, which is the same as `LIKE '%@domain'` for a domain without `@` (one with `@` is
 *   searched with the LIKE). Both databases lower-case ASCII the same way.
 * - `from`/`to`: `created_at >= from 00:00` and `< the day after to, 00:00` (UTC days, inclusive).
 * - `until`: `created_at <= until`.
 * - `country`, `source`, `campaign` (utm_campaign): equality, NONE_VALUE → IS NULL; `status`: equality.
 *
 * Each equality filter has its own (column, created_at DESC, id DESC) index (migration
 * 2026-11-25T0900), so a filtered page reads its index newest first and stops at the limit, and a
 * filtered count or GROUP BY reads the index alone.
 */
export function matching(
  db: Kysely<Database>,
  filter: WaitlistFilter,
  options: { search?: SearchForm } = {},
): (eb: WaitlistExpressionBuilder) => Expression<SqlBool> {
  const until = filter.until ? untilBound(db, filter.until) : null;
  const searchForm = options.search ?? 'rowids';
  const sqlite = !isPostgres(db);
  return (eb) => {
    const conditions: Array<Expression<SqlBool>> = [eb('list_id', '=', listIdOf(filter))];
    if (filter.q) {
      const domain = searchDomain(filter.q);
      if (domain !== null && !domain.includes('@')) {
        // Ending in `@domain` is having `domain` after the last `@`: the domain index's key.
        conditions.push(sql<SqlBool>`${emailDomain(db)} = ${domain}`);
      } else {
        const pattern = domain !== null ? `%@${escapeLike(domain)}` : `%${escapeLike(filter.q.toLowerCase())}%`;
        conditions.push(
          sqlite && searchForm === 'rowids'
            ? sql<SqlBool>`+rowid IN (SELECT rowid FROM waitlist WHERE list_id = ${listIdOf(filter)} AND lower(email) LIKE ${pattern} ESCAPE '\\')`
            : sql<SqlBool>`lower(email) LIKE ${pattern} ESCAPE '\\'`,
        );
      }
    }
    if (filter.from) conditions.push(eb('created_at', '>=', dayStart(filter.from)));
    if (filter.to) {
      const end = dayAfter(filter.to);
      if (end) conditions.push(eb('created_at', '<', dayStart(end)));
    }
    if (until) conditions.push(eb('created_at', '<=', until));
    const equals = (column: 'country' | 'source' | 'utm_campaign', value: string | undefined) => {
      if (!value) return;
      conditions.push(value === NONE_VALUE ? eb(column, 'is', null) : eb(column, '=', value));
    };
    equals('country', filter.country);
    equals('source', filter.source);
    equals('utm_campaign', filter.campaign);
    if (filter.status) conditions.push(eb('status', '=', filter.status));
    return eb.and(conditions);
  };
}

/** How many entries match the filter (all of the list's without one). */
export async function countWaitlist(db: Kysely<Database>, filter: WaitlistFilter = {}): Promise<number> {
  if (isPostgres(db) && isEmptyFilter(filter) && !filter.until) {
    // Every entry: the per-day status counts the triggers keep (migration 2026-11-27T0900), summed;
    // a few thousand rows instead of a read of an index of every entry.
    const total = await db
      .selectFrom('waitlist_rollup')
      .select(sql<string | null>`sum(n)`.as('n'))
      .where('dim', '=', 1)
      .where('list_id', '=', listIdOf(filter))
      .executeTakeFirstOrThrow();
    return Number(total.n ?? 0);
  }
  const row = await db
    .selectFrom('waitlist')
    .select((eb) => eb.fn.countAll().as('n'))
    .where(matching(db, filter, { search: 'inline' }))
    .executeTakeFirstOrThrow();
  // PostgreSQL returns count(*) as a bigint string.
  return Number(row.n);
}
