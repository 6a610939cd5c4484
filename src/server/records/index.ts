import type { FastifyInstance } from 'fastify';
import type { ServedPages } from '../site/served.js';
import { PAGES } from '../../shared/site/pages.js';
import { storeConsentRecord } from './consents.js';
import { mailSendRecorder, templateVersions } from './mail.js';
import { readArchivedPages } from './pages.js';
import { consentStatement, legends, offeringPage, offeringStatements } from './texts.js';
import type { ListRecord } from '../db/lists.js';
import { UsageCounter } from './usage.js';
import { purgeExpiredVersions, storeVersion } from './versions.js';

/**
 * The records a funding portal keeps (issue 30, docs/decisions/055, docs/records.md): every version of every
 * text shown or sent, what each signup was given, what each e-mail was rendered from. This file is
 * the room's declared interface: `app.records` for the signup (the consent record it stores with
 * each entry) and buildApp's registration.
 */
export interface RecordsService {
  /** The consent record every signup of this instance stores with its entry (waitlist.consent_record). */
  consentRecord: string;
  /** Writes the uses counted in memory now (the admin's views and the bundle call it first). */
  flush(): Promise<void>;
  /**
   * An offering list's texts (issue 31) archived as versions (its page, its kind's statements) and
   * the consent record its signups store: kept once per version of the list, at each change and
   * on the first signup after a start.
   */
  listConsentRecord(list: ListRecord): Promise<string>;
  /** Counts one showing of an offering list's page (its page, statements and legends versions). */
  listPageServed(list: ListRecord): void;
}

declare module 'fastify' {
  interface FastifyInstance {
    records: RecordsService;
  }
}

const DAY_MS = 24 * 60 * 60 * 1000;

export interface RecordsOptions {
  /** The consent settings the signup uses (content.ts `consent`, or a test's). */
  consent: { version: string; checkbox: string | null };
  /** Sets the counter of pages served (site/served.ts), which the site routes call. */
  setServedPages: (counter: ServedPages) => void;
}

/**
 * Archives this instance's texts (the web build's pages, the consent statement, the legends; the
 * e-mail templates when first sent), stores its consent record, counts uses in memory and writes
 * them every minute and at close, and applies the retention at start and daily. Call after the
 * migrations and app.mail, before the routes.
 */
export async function registerRecords(app: FastifyInstance, options: RecordsOptions): Promise<void> {
  const { db } = app.database;
  const usage = new UsageCounter(db, app.log);
  const built = await readArchivedPages(app.config.webRoot);
  // One transaction: one commit (one fsync on SQLite) for the whole start.
  const { pages, statementId, legendsId, consentRecord } = await db.transaction().execute(async (trx) => {
    const pages = new Map<string, string>();
    for (const [file, version] of built) pages.set(file, await storeVersion(trx, version));
    const statementId = await storeVersion(trx, consentStatement({ consent: options.consent, confirmation: app.config.consent.confirmation }));
    const legendsId = await storeVersion(trx, legends());
    const consentRecord = await storeConsentRecord(trx, { page: pages.get(PAGES.home.file) ?? null, statement: statementId, legends: legendsId });
    return { pages, statementId, legendsId, consentRecord };
  });
  const landing = pages.get(PAGES.home.file) ?? null;

  // Every page carries the legends; the landing page the consent statement too.
  options.setServedPages({
    served(file) {
      const id = pages.get(file);
      if (id === undefined) return;
      const at = Date.now();
      usage.add(id, at);
      usage.add(legendsId, at);
      if (id === landing) usage.add(statementId, at);
    },
  });

  if (app.mail.enabled && app.config.publicUrl) {
    const recordSend = mailSendRecorder(
      templateVersions(db, { publicUrl: app.config.publicUrl, confirmationLinkTtlSeconds: app.config.consent.confirmationLinkTtlSeconds }),
      usage,
    );
    app.mail.recordSends(async (message) => {
      const write = await recordSend(message);
      if (!write) return null;
      return async (trx, sentAt) => {
        await write(trx, sentAt);
        usage.add(legendsId, sentAt.getTime());
      };
    });
  }

  // An offering list's versions and consent record, by the list's id and last change.
  const listRecords = new Map<string, Promise<{ record: string; ids: string[] }>>();
  const listVersions = (list: ListRecord) => {
    if (list.kind === 'portal') return Promise.resolve({ record: consentRecord, ids: [] as string[] });
    const { kind } = list;
    const key = `${list.id}@${list.updatedAt}`;
    let kept = listRecords.get(key);
    if (!kept) {
      kept = db.transaction().execute(async (trx) => {
        const page = await storeVersion(trx, offeringPage(list));
        const statement = await storeVersion(trx, offeringStatements(kind));
        return { record: await storeConsentRecord(trx, { page, statement, legends: legendsId }), ids: [page, statement, legendsId] };
      });
      kept.catch(() => listRecords.delete(key));
      listRecords.set(key, kept);
    }
    return kept;
  };
  app.decorate('records', {
    consentRecord,
    flush: () => usage.flush(),
    listConsentRecord: async (list) => (await listVersions(list)).record,
    listPageServed: (list) => {
      void listVersions(list).then(
        ({ ids }) => {
          const at = Date.now();
          for (const id of ids) usage.add(id, at);
        },
        (err: unknown) => app.log.error({ err }, 'records: could not keep an offering page'),
      );
    },
  } satisfies RecordsService);

  const { retentionYears } = app.config.records;
  const purge = async () => {
    try {
      const deleted = await purgeExpiredVersions(db, retentionYears);
      if (deleted > 0) app.log.info({ deleted, retentionYears }, 'records: versions past their retention deleted');
    } catch (err) {
      app.log.error({ err }, 'records: could not apply the retention');
    }
  };
  let purgeTimer: NodeJS.Timeout | null = null;
  app.addHook('onReady', async () => {
    usage.start();
    await purge();
    purgeTimer = setInterval(() => void purge(), DAY_MS);
    purgeTimer.unref();
  });
  // Before the database closes (onClose hooks run last-added first): the last counts are written.
  app.addHook('onClose', async () => {
    if (purgeTimer) clearInterval(purgeTimer);
    await usage.stop();
  });
}
