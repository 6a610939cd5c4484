import type { Kysely, Selectable } from 'kysely';
import { toIsoTimestamp } from './database.js';
import type { Database, ListsTable } from './schema.js';
import type { ListView } from '../../shared/admin/lists-api.js';
import { PORTAL_LIST, type ListKind, type ListState } from '../../shared/lists/contract.js';

/**
 * The `lists` table (issue 31, decision 063) as every room reads it: the portal's waitlist is id 0,
 * slug `portal`; offering lists have their own ids, which their entries carry in waitlist.list_id.
 * Its writes (create, edit, open, close) are the lists room's (src/server/lists).
 */
type Db = Kysely<Database>;

export const PORTAL_LIST_ID = 0;

export type ListRow = Selectable<ListsTable>;

/** A list as the rooms use it. */
export interface ListRecord {
  id: number;
  slug: string;
  kind: 'portal' | ListKind;
  state: ListState;
  name: string;
  description: string;
  /** The amount bands' boundaries (whole dollars), or null. */
  bands: number[] | null;
  createdAt: string;
  updatedAt: string;
}

function parseBands(text: string | null): number[] | null {
  if (text === null) return null;
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) && value.every((n) => typeof n === 'number') ? (value as number[]) : null;
  } catch {
    return null;
  }
}

export function toListRecord(row: ListRow): ListRecord {
  return {
    id: Number(row.id),
    slug: row.slug,
    kind: row.kind,
    state: row.state,
    name: row.name,
    description: row.description,
    bands: parseBands(row.amount_bands),
    createdAt: toIsoTimestamp(row.created_at),
    updatedAt: toIsoTimestamp(row.updated_at),
  };
}

/** The admin API's view (the portal's name is the product's, given by the caller). */
export function toListView(list: ListRecord, portalName: string): ListView {
  return {
    slug: list.slug,
    kind: list.kind,
    state: list.state,
    name: list.kind === 'portal' ? portalName : list.name,
    description: list.description,
    bands: list.bands,
    createdAt: list.createdAt,
    updatedAt: list.updatedAt,
  };
}

export async function findListBySlug(db: Db, slug: string): Promise<ListRecord | undefined> {
  const row = await db.selectFrom('lists').selectAll().where('slug', '=', slug).executeTakeFirst();
  return row ? toListRecord(row) : undefined;
}

export async function findListById(db: Db, id: number): Promise<ListRecord | undefined> {
  const row = await db.selectFrom('lists').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toListRecord(row) : undefined;
}

/** Every list, the portal's first, then by slug. */
export async function allLists(db: Db): Promise<ListRecord[]> {
  const rows = await db.selectFrom('lists').selectAll().orderBy('id').execute();
  const lists = rows.map(toListRecord);
  // The portal's list needs no row (migration 2026-11-29T0900 writes one; an emptied table has none).
  const portal = lists.find((l) => l.id === PORTAL_LIST_ID) ?? {
    id: PORTAL_LIST_ID,
    slug: PORTAL_LIST,
    kind: 'portal',
    state: 'open',
    name: '',
    description: '',
    bands: null,
    createdAt: new Date(0).toISOString(),
    updatedAt: new Date(0).toISOString(),
  };
  return [portal, ...lists.filter((l) => l.id !== PORTAL_LIST_ID).sort((a, b) => (a.slug < b.slug ? -1 : 1))];
}

/** True when the slug names the portal's waitlist (or nothing is named). */
export function isPortalSlug(slug: string | undefined | null): boolean {
  return slug === undefined || slug === null || slug === '' || slug === PORTAL_LIST;
}
