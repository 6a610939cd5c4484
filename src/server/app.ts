import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { filesToKeepPrivate, proxyTrustWarning, type AppConfig, type TrustProxy } from './config.js';
import { openDatabase, type DatabaseHandle } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { startSearchIndexUpkeep } from './db/search-index-upkeep.js';
import { registerErrorHandler } from './http/errors.js';
import { registerSecurity } from './http/security.js';
import { registerCrossSiteGuard } from './http/cross-site.js';
import { healthRoutes } from './http/health.js';
import { OneLinePerRequest, withRedactedUrls } from './http/request-log.js';
import { createGeolocator, type Geolocator } from './geolocation/geolocator.js';
import { waitlistRoutes } from './signup/routes.js';
import { createSignups } from './signup/signups.js';
import { apiRoutes } from './api/plugin.js';
import { embedRoutes } from './embed/routes.js';
import { siteContent } from '../shared/site/content.js';
import { registerScreeningCounter } from './signup/screening-counter.js';
import { createEmailDomainScreen } from './email-domains/index.js';
import type { SignupBatchHooks } from './signup/batcher.js';
import { consentRoutes } from './consent/routes.js';
import { adminWaitlistRoutes } from './admin/routes.js';
import { challengeRoutes, heldRoutes } from './challenge/routes.js';
import { adminInsightsRoutes } from './insights/routes.js';
import { registerRollupFolder } from './insights/rollup-fold.js';
import { exportRoutes } from './export/routes.js';
import { siteRoutes } from './site/routes.js';
import { registerServedPages } from './site/served.js';
import { registerRecords } from './records/index.js';
import { adminRecordsRoutes } from './records/routes.js';
import { authRoutes } from './auth/routes.js';
import { adminAccountRoutes } from './auth/account-routes.js';
import { adminTeamRoutes } from './auth/team-routes.js';
import { registerAdminGuard } from './auth/require-admin.js';
import { looseFileWarnings, type SecretBox } from './crypto/secret-box.js';
import { loadSecretBox } from './auth/secret-rotation.js';
import { configureKeyRing } from './auth/keys.js';
import { startAuditRetention } from './audit/audit-log.js';
import { createRateLimitStores, type RateLimitStores } from './rate-limit/index.js';
import { registerMail, type MailWorkerOverrides } from './mail/index.js';
import { adminMailRoutes } from './mail/admin-routes.js';
import { createPubSub, type PubSub } from './pubsub/index.js';
import { registerLiveWaitlist } from './live/updates.js';
import { adminEventsRoutes, type AdminEventsOptions } from './live/routes.js';
import { registerWebhooks, type WebhookWorkerOverrides } from './webhooks/service.js';
import { adminWebhookRoutes } from './webhooks/routes.js';
import { listsRoutes } from './lists/routes.js';

declare module 'fastify' {
  interface FastifyInstance {
    config: AppConfig;
    database: DatabaseHandle;
    /** Where the signup and sign-in limits count (memory, database or Redis; see rate-limit/index.ts). */
    rateLimits: RateLimitStores;
    /** Messages between instances (memory, PostgreSQL LISTEN/NOTIFY or Redis; see pubsub/index.ts). */
    pubsub: PubSub;
    /** Seals the auth service's secrets at rest with a key kept outside the database. */
    secretBox: SecretBox;
  }
}

export interface BuildOptions {
  logger?: FastifyServerOptions['logger'];
  /** Replace the geolocation source (tests use a fixed table instead of the MMDB files). */
  geolocator?: Geolocator;
  /** Outbox worker settings (tests inject the clock and the backoff); used only when SMTP_URL is set. */
  mailWorker?: MailWorkerOverrides;
  /** Webhook sender settings (tests inject the clock, the backoff and the poll interval). */
  webhookWorker?: WebhookWorkerOverrides;
  /** The consent text settings (tests pass a checkbox text); content.ts `consent` by default. */
  consent?: { version: string; checkbox: string | null };
  /** Hooks into the signups' group commit (tests hold a commit to watch the answer wait for it). */
  signupBatch?: SignupBatchHooks;
  /** The admin event stream's heartbeat and session-check intervals (tests shorten them). */
  adminEvents?: AdminEventsOptions;
  /**
   * Where a SQLite database's WAL checkpoints run: in a thread of their own (the default, the
   * server's; db/sqlite-checkpointer.ts), or SQLite's own on commit. In-process test apps use the
   * latter: the same durability, without starting a worker thread (through tsx) per app.
   */
  sqliteCheckpoints?: 'thread' | 'on-commit';
}

/** Fastify's types lack the hop-count form, so a count becomes the equivalent function. */
function toFastifyTrustProxy(value: TrustProxy): boolean | string[] | ((address: string, hop: number) => boolean) {
  return typeof value === 'number' ? (_address, hop) => hop < value : value;
}

/** Builds the whole application without listening: migrations run before the first request. */
export async function buildApp(config: AppConfig, options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    // E-mail links carry a token in their query, the admin's list its search: request log lines show them redacted.
    logger: withRedactedUrls(options.logger ?? { level: config.logLevel }),
    // One line per request, when it completes (http/request-log.ts).
    logController: new OneLinePerRequest(),
    trustProxy: toFastifyTrustProxy(config.trustProxy),
    bodyLimit: 64 * 1024,
    requestTimeout: config.requestTimeoutMs,
    return503OnClosing: true,
  });

  // Throwaway and dead domains (email-domains/): an unreadable SIGNUP_BLOCKED_DOMAINS_FILE stops the start here.
  const emailDomains = createEmailDomainScreen(config.emailDomains, app.log);
  app.decorate('emailDomains', emailDomains);
  app.addHook('onClose', async () => emailDomains.close());

  const database = openDatabase(config.database, {
    onIdleError: (err) => app.log.error({ err }, 'database: idle connection failed'),
    ...(options.sqliteCheckpoints === 'on-commit' ? {} : { backgroundCheckpoints: app.log }),
  });
  app.decorate('config', config);
  app.decorate('database', database);
  app.addHook('onClose', async () => database.close());

  try {
    const applied = await migrateToLatest(database.db);
    if (applied.length > 0) app.log.info({ migrations: applied }, 'database migrated');
    // Seals with AUTH_SECRET_KEY, opens with it or AUTH_SECRET_KEY_PREVIOUS (auth/secret-rotation.ts).
    app.decorate('secretBox', await loadSecretBox(config.auth, database.db));
  } catch (err) {
    await database.close();
    throw err;
  }

  // The signing keys are sealed with the secret box; a replaced key verifies for one token lifetime.
  configureKeyRing(database.db, {
    secretBox: app.secretBox,
    tokenLifetimeSeconds: config.auth.jwtExpirySeconds,
    warn: (message) => app.log.warn(message),
  });
  const stopAuditRetention = await startAuditRetention(database.db, config.auditRetentionDays, (err) =>
    app.log.error({ err }, 'audit: could not delete expired entries'),
  );
  app.addHook('onClose', async () => stopAuditRetention());
  const proxyWarning = proxyTrustWarning(config);
  if (proxyWarning) app.log.warn(proxyWarning);
  for (const warning of looseFileWarnings(filesToKeepPrivate(config))) app.log.warn(warning);

  const rateLimits = await createRateLimitStores(config, database, app.log);
  app.decorate('rateLimits', rateLimits);
  app.addHook('onClose', async () => rateLimits.close());

  // Live updates of the admin (live/updates.ts) over the pub/sub; closed before it (onClose runs last-added first).
  const pubsub = createPubSub(config, database, app.log);
  app.decorate('pubsub', pubsub);
  app.addHook('onClose', async () => pubsub.close());
  registerLiveWaitlist(app);

  // Held and refused signups by reason, for the insight panel (written within a second, and on close).
  registerScreeningCounter(app);
  // PostgreSQL: the rollup's recent days folded once a second, outside the signups' statements (decision 074).
  registerRollupFolder(app);
  // PostgreSQL: the search index's pending list emptied once a second, outside the signups' statements (decision 075).
  const searchIndexUpkeep = startSearchIndexUpkeep(database.db, app.log);
  if (searchIndexUpkeep) app.addHook('preClose', async () => searchIndexUpkeep.stop());

  // E-mail (src/server/mail): without SMTP_URL, app.mail.enabled is false and no worker runs.
  registerMail(app, config.mail, options.mailWorker);
  // Webhooks (src/server/webhooks): events queued with the change that causes them, sent by a worker here.
  registerWebhooks(app, config.webhooks, options.webhookWorker);

  // The records (src/server/records): this instance's texts archived before the first request.
  const consent = options.consent ?? siteContent.consent;
  const setServedPages = registerServedPages(app);
  await registerRecords(app, { consent, setServedPages });

  const geolocator = options.geolocator ?? (await createGeolocator(config.geolocation, app.log));

  // Every route's schemas are zod contracts from src/shared (docs/decisions/007).
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  registerErrorHandler(app);
  registerAdminGuard(app);
  await registerSecurity(app);
  // Before the routes: a state-changing request from another site is refused before its body is read.
  registerCrossSiteGuard(app, { publicUrl: config.publicUrl, embedOrigins: config.embedOrigins });
  await app.register(healthRoutes);
  // One group commit for the form's signups and the API's (signup/signups.ts).
  const signups = createSignups(app, { geolocator, consentVersion: consent.version, signupBatch: options.signupBatch });
  await app.register(waitlistRoutes, { signups, consent });
  await app.register(embedRoutes);
  await app.register(apiRoutes, { signups, consent });
  await app.register(consentRoutes);
  await app.register(adminWaitlistRoutes);
  await app.register(challengeRoutes);
  await app.register(heldRoutes);
  await app.register(adminInsightsRoutes);
  await app.register(exportRoutes);
  await app.register(adminEventsRoutes, options.adminEvents ?? {});
  await app.register(adminAccountRoutes);
  await app.register(adminTeamRoutes);
  await app.register(adminMailRoutes);
  await app.register(adminRecordsRoutes);
  await app.register(adminWebhookRoutes);
  await app.register(listsRoutes);
  await app.register(authRoutes, { prefix: '/auth/v1' });
  await app.register(siteRoutes);
  return app;
}
