import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { strFromU8, unzipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { listAudit } from '../../../src/server/audit/audit-log.js';
import { ADMIN_RECORD_VERSIONS_PATH, ADMIN_RECORDS_BUNDLE_PATH, recordVersionListSchema, recordVersionSchema } from '../../../src/shared/admin/records-api.js';
import { run as recordsCli } from '../../../src/server/cli/records.js';
import { TEST_DIALECTS } from '../../support/databases.js';
import { cleanupsAfterEach, createAdminTestApp, TEST_ADMIN } from '../../support/admin-app.js';
import { writePages } from './support.js';

/** The admin records API (src/shared/admin/records-api.ts) and `npm run records -- export`. */
const cleanups = cleanupsAfterEach();

describe.each(TEST_DIALECTS)('records API and CLI (%s)', (dialect) => {
  it('lists versions and one version to an admin only, and hands out the bundle, audited', async () => {
    const webRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'records-web-'));
    writePages(webRoot);
    cleanups.push(async () => fs.rmSync(webRoot, { recursive: true, force: true }));
    const { t, token } = await createAdminTestApp({ WEB_ROOT: webRoot }, { dialect });
    cleanups.push(() => t.close());
    const auth = { authorization: `Bearer ${token}` };

    expect((await t.app.inject({ url: ADMIN_RECORD_VERSIONS_PATH })).statusCode).toBe(401);
    expect((await t.app.inject({ url: `${ADMIN_RECORDS_BUNDLE_PATH}?from=2026-01-01&to=2026-01-02` })).statusCode).toBe(401);

    await t.app.inject({ url: '/' });
    const list = recordVersionListSchema.parse((await t.app.inject({ url: ADMIN_RECORD_VERSIONS_PATH, headers: auth })).json());
    expect(list.retentionYears).toBe(5);
    const landing = list.versions.find((v) => v.kind === 'page' && v.name === 'index.html')!;
    // The uses counted in memory are written before the answer.
    expect(landing.useCount).toBe(1);

    const one = await t.app.inject({ url: `${ADMIN_RECORD_VERSIONS_PATH}/${landing.id}`, headers: auth });
    expect(recordVersionSchema.parse(one.json()).parts['page.html']).toContain('Private Markets On Chain');
    expect((await t.app.inject({ url: `${ADMIN_RECORD_VERSIONS_PATH}/page:index.html@0000000000000000`, headers: auth })).statusCode).toBe(404);
    expect((await t.app.inject({ url: `${ADMIN_RECORD_VERSIONS_PATH}/nonsense`, headers: auth })).statusCode).toBe(400);

    const today = new Date().toISOString().slice(0, 10);
    expect((await t.app.inject({ url: `${ADMIN_RECORDS_BUNDLE_PATH}?from=${today}&to=2020-01-01`, headers: auth })).statusCode).toBe(400);
    expect((await t.app.inject({ url: `${ADMIN_RECORDS_BUNDLE_PATH}?from=2026-02-30&to=2026-03-01`, headers: auth })).statusCode).toBe(400);
    const bundle = await t.app.inject({ url: `${ADMIN_RECORDS_BUNDLE_PATH}?from=${today}&to=${today}`, headers: auth });
    expect(bundle.statusCode).toBe(200);
    expect(bundle.headers['content-type']).toBe('application/zip');
    expect(bundle.headers['content-disposition']).toBe(`attachment; filename="records_${today}_${today}.zip"`);
    const manifest = JSON.parse(strFromU8(unzipSync(bundle.rawPayload)['manifest.json']!)) as { versions: Array<{ id: string }> };
    expect(manifest.versions.map((v) => v.id)).toContain(landing.id);
    const [audit] = await listAudit(t.app.database.db, 1);
    expect(audit).toMatchObject({ action: 'records_export', actorEmail: TEST_ADMIN.email, detail: { from: today, to: today } });

    // The CLI writes the same bundle from the database, never over an existing file.
    const out = path.join(t.dataDir, 'bundle.zip');
    const io = { env: { DATABASE_URL: t.databaseUrl, AUTH_SECRET_KEY_FILE: path.join(t.dataDir, 'auth-secret.key') }, cwd: t.dataDir, stdout: sink(), stderr: sink() };
    expect(await recordsCli(['export', '--from', today, '--to', today, '--out', 'bundle.zip'], io)).toBe(0);
    const files = unzipSync(fs.readFileSync(out));
    expect((JSON.parse(strFromU8(files['manifest.json']!)) as { versions: Array<{ id: string }> }).versions.map((v) => v.id)).toContain(landing.id);
    expect(await recordsCli(['export', '--from', today, '--to', today, '--out', 'bundle.zip'], io)).toBe(1);
    expect(await recordsCli(['export', '--from', today, '--out', 'other.zip'], io)).toBe(2);
  });
});

function sink(): NodeJS.WritableStream {
  return new Writable({ write: (_chunk, _encoding, done) => done() });
}
