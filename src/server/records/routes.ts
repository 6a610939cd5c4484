import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { recordAudit } from '../audit/audit-log.js';
import { HttpError } from '../http/errors.js';
import {
  ADMIN_RECORD_VERSIONS_PATH,
  ADMIN_RECORDS_BUNDLE_PATH,
  recordsBundleFileName,
  recordsBundleQuerySchema,
  recordVersionListSchema,
  recordVersionParamsSchema,
  recordVersionSchema,
} from '../../shared/admin/records-api.js';
import { buildRecordsBundle } from './bundle.js';
import { findVersion, listVersions } from './versions.js';

/**
 * The admin records API (contract: src/shared/admin/records-api.ts): the kept versions by kind,
 * one version's text, and the examiner's bundle of a period. Admin-only like every /api/admin
 * route (guardAdminScope: requireAdmin before anything is read). The uses counted in memory are
 * written first, so what the admin sees includes this instance's latest.
 */
export async function adminRecordsRoutes(instance: FastifyInstance): Promise<void> {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const { db } = app.database;

  app.guardAdminScope();

  app.get(ADMIN_RECORD_VERSIONS_PATH, { config: { role: 'admin' }, schema: { response: { 200: recordVersionListSchema } } }, async () => {
    await app.records.flush();
    return { versions: await listVersions(db), retentionYears: app.config.records.retentionYears };
  });

  app.get(
    `${ADMIN_RECORD_VERSIONS_PATH}/:id`,
    { config: { role: 'admin' }, schema: { params: recordVersionParamsSchema, response: { 200: recordVersionSchema } } },
    async (request) => {
      await app.records.flush();
      const version = await findVersion(db, request.params.id);
      if (!version) throw new HttpError(404, 'not_found', 'No kept version has this id.');
      return version;
    },
  );

  app.get(ADMIN_RECORDS_BUNDLE_PATH, { config: { role: 'admin' }, schema: { querystring: recordsBundleQuerySchema } }, async (request, reply) => {
    const admin = app.adminOf(request);
    await app.records.flush();
    const { zip, manifest } = await buildRecordsBundle(db, request.query, { retentionYears: app.config.records.retentionYears });
    await recordAudit(db, {
      action: 'records_export',
      actorEmail: admin.email,
      actorId: admin.userId,
      ip: request.ip,
      detail: { from: request.query.from, to: request.query.to, versions: manifest.versions.length },
    });
    return reply
      .type('application/zip')
      .header('content-disposition', `attachment; filename="${recordsBundleFileName(request.query)}"`)
      .send(Buffer.from(zip.buffer, zip.byteOffset, zip.byteLength));
  });
}
