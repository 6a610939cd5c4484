import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { allLists, findListBySlug, toListView, type ListRecord } from '../db/lists.js';
import { pageTemplateLoader } from '../http/error-page.js';
import { siteContent } from '../../shared/site/content.js';
import { isValidSlug, OFFERING_PAGE_PREFIX, OFFERING_RESULT_PARAM } from '../../shared/lists/contract.js';
import {
  ADMIN_LISTS_PATH,
  createListSchema,
  listParamsSchema,
  listsResultSchema,
  listViewSchema,
  updateListSchema,
} from '../../shared/admin/lists-api.js';
import { createList, updateList, type ListActor } from './manage.js';
import { renderOfferingPage, type OfferingResult } from './page.js';

/**
 * The lists room (issue 31, decision 063): the offering pages (`/offerings/SLUG`, public) and the
 * admin's lists (contract: src/shared/admin/lists-api.ts). The signup to a list is the signup
 * room's; the list's entries are the admin's, the export's and the insight panel's, by the filter's
 * `list`.
 */
export async function listsRoutes(app: FastifyInstance): Promise<void> {
  await app.register(offeringPageRoutes);
  await app.register(adminListsRoutes);
}

async function offeringPageRoutes(app: FastifyInstance): Promise<void> {
  const loadShell = pageTemplateLoader(app);
  app.get<{ Params: { slug: string }; Querystring: Record<string, unknown> }>(`${OFFERING_PAGE_PREFIX}:slug`, async (request, reply) => {
    const { slug } = request.params;
    const list = isValidSlug(slug) ? await findListBySlug(app.database.db, slug) : undefined;
    // A draft (or the portal's, or none): the site's not-found page.
    if (!list || list.kind === 'portal' || list.state === 'draft') return reply.callNotFound();
    const asked = request.query[OFFERING_RESULT_PARAM];
    const result: OfferingResult = asked === 'joined' || asked === 'pending' ? asked : null;
    const html = renderOfferingPage(await loadShell(), list, result);
    app.records.listPageServed(list);
    return reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(html);
  });
}

async function adminListsRoutes(instance: FastifyInstance): Promise<void> {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const { db } = app.database;
  app.guardAdminScope();
  const view = (list: ListRecord) => toListView(list, siteContent.productName);
  const actorOf = (request: Parameters<typeof app.adminOf>[0]): ListActor => {
    const admin = app.adminOf(request);
    return { email: admin.email, id: admin.userId, ip: request.ip, by: 'admin' };
  };
  /** A change's texts are kept as versions at once (records), not only at the first signup. */
  const archived = async (list: ListRecord) => {
    await app.records.listConsentRecord(list);
    return view(list);
  };

  app.get(ADMIN_LISTS_PATH, { config: { role: 'viewer' }, schema: { response: { 200: listsResultSchema } } }, async () => ({
    lists: (await allLists(db)).map(view),
  }));

  app.post(
    ADMIN_LISTS_PATH,
    { config: { role: 'admin' }, bodyLimit: 16 * 1024, schema: { body: createListSchema, response: { 201: listViewSchema } } },
    async (request, reply) => {
      const list = await createList(db, actorOf(request), request.body);
      request.log.info({ slug: list.slug }, 'offering list created');
      return reply.status(201).send(await archived(list));
    },
  );

  app.patch(
    `${ADMIN_LISTS_PATH}/:slug`,
    { config: { role: 'admin' }, bodyLimit: 16 * 1024, schema: { params: listParamsSchema, body: updateListSchema, response: { 200: listViewSchema } } },
    async (request) => {
      const list = await updateList(db, actorOf(request), request.params.slug, request.body);
      request.log.info({ slug: list.slug, state: list.state }, 'offering list changed');
      return archived(list);
    },
  );
}
