import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { auditedFilter } from '../../../src/server/admin/index.js';
import { auditEmailHash, listAudit } from '../../../src/server/audit/audit-log.js';
import { createAdmin } from '../../../src/server/auth/admins.js';
import { ADMIN_DELETE_MATCHING_PATH, ADMIN_EXPORT_PATH, ADMIN_INVITE_PATH, ADMIN_WAITLIST_PATH } from '../../../src/shared/admin/waitlist-api.js';
import { NO_ATTRIBUTION } from '../../../src/shared/waitlist/attribution.js';
import { NO_CONSENT_RECORD, type WaitlistEntry } from '../../../src/shared/waitlist/entry.js';
import { TEST_DIALECTS, type TestDialect } from '../../support/databases.js';
import { signIn } from '../../support/sign-in.js';
import { startSmtpServer } from '../../support/smtp.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

/**
 * Security review, finding 5: the addresses an admin searches for stay out of the audit log and the
 * request logs. Delete-matching, invite and export record their filter with the search text (`q`) replaced
 * by its keyed hash and length; request log lines show `q` as `[redacted]`, as they do a link's token.
 */

const ADMIN = { email: 'admin@example.com', password: 'correct horse battery staple' };
const SEARCHED = 'alice.searched@example.com';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

function entry(email: string, over: Partial<WaitlistEntry> = {}): WaitlistEntry {
  return {
    id: randomUUID(),
    email,
    created_at: new Date(Date.UTC(2026, 0, 1)).toISOString(),
    ip_address: null,
    country: 'Germany',
    city: null,
    region: null,
    ...NO_CONSENT_RECORD,
    ...NO_ATTRIBUTION,
    status: 'joined',
    ...over,
  };
}

describe.each(TEST_DIALECTS)('searched addresses (%s)', (dialect: TestDialect) => {
  async function start(logLines?: string[]): Promise<{ t: TestApp; token: string }> {
    const smtp = await startSmtpServer();
    cleanups.push(() => smtp.close());
    const logger = logLines
      ? {
          level: 'info' as const,
          stream: new Writable({
            write(chunk: Buffer, _encoding, done) {
              logLines.push(chunk.toString('utf8'));
              done();
            },
          }),
        }
      : false;
    const t = await createTestApp(
      { SMTP_URL: smtp.url, MAIL_FROM: 'Product <hello@example.com>', PUBLIC_URL: 'https://waitlist.example.com' },
      { dialect, mailWorker: { pollIntervalMs: 3_600_000 }, logger },
    );
    cleanups.push(() => t.close());
    await createAdmin(t.app.database.db, ADMIN.email, ADMIN.password);
    return { t, token: (await signIn(t.app, ADMIN)).access_token };
  }

  it('delete-matching, invite and export record the search as its keyed hash and length, never as typed', async () => {
    const { t, token } = await start();
    await t.app.database.db
      .insertInto('waitlist')
      .values([entry(SEARCHED), entry('bob.searched@example.com'), entry('carol@example.com')])
      .execute();
    const call = (url: string, body: unknown) =>
      t.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${token}` }, payload: body as object });

    const invited = await call(ADMIN_INVITE_PATH, { filter: { q: 'BOB.searched@', country: 'Germany' } });
    expect(invited.statusCode, invited.body).toBe(200);
    expect(invited.json()).toMatchObject({ invited: 1 });
    const exported = await call(ADMIN_EXPORT_PATH, { filter: { q: 'bob.SEARCHED@' } });
    expect(exported.statusCode, exported.body).toBe(200);
    const deleted = await call(ADMIN_DELETE_MATCHING_PATH, { filter: { q: ` ${SEARCHED}` } });
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect(deleted.json()).toEqual({ deleted: 1 });

    const audit = await listAudit(t.app.database.db, 20);
    const invite = audit.find((a) => a.action === 'invite')!;
    expect(invite.detail).toEqual({
      invited: 1,
      scope: 'matching',
      filter: { country: 'Germany', q_hash: auditEmailHash(t.app.secretBox, 'bob.searched@'), q_length: 'BOB.searched@'.length },
      except: 0,
      skipped: { alreadyInvited: 0, pending: 0, unsubscribed: 0 },
    });
    const exportRecord = audit.find((a) => a.action === 'export')!;
    expect(exportRecord.detail.filter).toEqual({ q_hash: auditEmailHash(t.app.secretBox, 'bob.searched@'), q_length: 'bob.SEARCHED@'.length });
    const summary = audit.find((a) => a.action === 'delete' && a.detail.parts !== undefined)!;
    // The same keyed hash as the deleted row's own record: a search for a whole address can be matched with it.
    expect(summary.detail.filter).toEqual({ q_hash: auditEmailHash(t.app.secretBox, SEARCHED), q_length: SEARCHED.length });
    const part = audit.find((a) => a.action === 'delete' && a.detail.part === 1)!;
    expect((part.detail.email_hashes as string[])[0]).toBe((summary.detail.filter as { q_hash: string }).q_hash);
    // Nothing of what was typed is in the log.
    const stored = JSON.stringify(await t.app.database.db.selectFrom('audit_log').selectAll().execute());
    expect(stored).not.toMatch(/searched/i);
    // A filter without a search is kept as it is.
    expect(auditedFilter({ country: 'Germany', status: 'joined' }, t.app.secretBox)).toEqual({ country: 'Germany', status: 'joined' });
  });

  it('request log lines show the search as [redacted], like an e-mail link token', async () => {
    const lines: string[] = [];
    const { t, token } = await start(lines);
    const list = await t.app.inject({
      method: 'GET',
      url: `${ADMIN_WAITLIST_PATH}?q=${encodeURIComponent(SEARCHED)}&country=Germany&limit=50`,
      headers: { authorization: `Bearer ${token}` },
    });
    expect(list.statusCode, list.body).toBe(200);
    // A refused one too (400 invalid_filter), and the search first or alone in the query.
    await t.app.inject({ method: 'GET', url: `${ADMIN_WAITLIST_PATH}?q=${'x'.repeat(300)}${SEARCHED}`, headers: { authorization: `Bearer ${token}` } });
    await t.app.inject({ method: 'GET', url: `${ADMIN_WAITLIST_PATH}?Q=${SEARCHED}`, headers: { authorization: `Bearer ${token}` } });
    await t.app.inject({ method: 'GET', url: `/unsubscribe?token=secret-link-token&q=${SEARCHED}` });
    const log = lines.join('');
    expect(log).toContain('request completed');
    expect(log).not.toContain('searched');
    expect(log).not.toContain('secret-link-token');
    const urls = lines.map((l) => (JSON.parse(l) as { req?: { url?: string } }).req?.url).filter((u): u is string => typeof u === 'string');
    expect(urls).toContain(`${ADMIN_WAITLIST_PATH}?q=[redacted]&country=Germany&limit=50`);
    expect(urls).toContain('/unsubscribe?token=[redacted]&q=[redacted]');
  });
});
