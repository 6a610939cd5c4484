import type { Kysely } from 'kysely';
import { recordAudit } from '../audit/audit-log.js';
import { findListBySlug, type ListRecord } from '../db/lists.js';
import type { Database } from '../db/schema.js';
import { HttpError } from '../http/errors.js';
import type { ListKind, ListState } from '../../shared/lists/contract.js';

/**
 * Creating and changing offering lists (issue 31), shared by the admin API (routes.ts) and the CLI
 * (`npm run admin -- lists`): each change and its audit record in one transaction. A list starts as
 * a draft; its slug and kind never change (its page's address and its statements); the portal's
 * list (slug `portal`) is not edited here.
 */
export interface ListActor {
  email: string | null;
  id: string | null;
  ip: string | null;
  by: 'admin' | 'cli';
}

export interface NewList {
  slug: string;
  name: string;
  description?: string | undefined;
  kind: ListKind;
  bands?: number[] | null | undefined;
}

export interface ListChanges {
  name?: string | undefined;
  description?: string | undefined;
  state?: ListState | undefined;
  bands?: number[] | null | undefined;
}

const notFound = () => new HttpError(404, 'not_found', 'There is no offering list with this slug.');

const bandsText = (bands: number[] | null | undefined) => (bands && bands.length > 0 ? JSON.stringify(bands) : null);

export async function createList(db: Kysely<Database>, actor: ListActor, input: NewList, now = new Date()): Promise<ListRecord> {
  const at = now.toISOString();
  return db.transaction().execute(async (trx) => {
    if (await findListBySlug(trx, input.slug)) throw new HttpError(409, 'slug_taken', 'A list with this slug exists already.');
    const { max } = await trx.selectFrom('lists').select((eb) => eb.fn.max('id').as('max')).executeTakeFirstOrThrow();
    await trx
      .insertInto('lists')
      .values({
        id: Number(max ?? 0) + 1,
        slug: input.slug,
        kind: input.kind,
        state: 'draft',
        name: input.name,
        description: input.description ?? '',
        amount_bands: bandsText(input.bands),
        created_at: at,
        updated_at: at,
      })
      .execute();
    await recordAudit(trx, { action: 'list.create', actorEmail: actor.email, actorId: actor.id, ip: actor.ip, detail: { slug: input.slug, kind: input.kind, by: actor.by } });
    return (await findListBySlug(trx, input.slug))!;
  });
}

export async function updateList(db: Kysely<Database>, actor: ListActor, slug: string, changes: ListChanges, now = new Date()): Promise<ListRecord> {
  return db.transaction().execute(async (trx) => {
    const list = await findListBySlug(trx, slug);
    if (!list || list.kind === 'portal') throw notFound();
    const set: Partial<{ name: string; description: string; state: ListState; amount_bands: string | null; updated_at: string }> = {};
    if (changes.name !== undefined) set.name = changes.name;
    if (changes.description !== undefined) set.description = changes.description;
    if (changes.state !== undefined) set.state = changes.state;
    if (changes.bands !== undefined) set.amount_bands = bandsText(changes.bands);
    if (Object.keys(set).length === 0) return list;
    set.updated_at = now.toISOString();
    await trx.updateTable('lists').set(set).where('id', '=', list.id).execute();
    await recordAudit(trx, { action: 'list.update', actorEmail: actor.email, actorId: actor.id, ip: actor.ip, detail: { slug, changed: Object.keys(set).filter((k) => k !== 'updated_at'), state: changes.state, by: actor.by } });
    return (await findListBySlug(trx, slug))!;
  });
}
