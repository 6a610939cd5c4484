import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { auditEmailHash } from '../audit/audit-log.js';
import { isDatabaseUnavailable, scrubDeletedRowsSoon } from '../db/database.js';
import { HttpError } from '../http/errors.js';
import { clientRateLimitHook } from '../rate-limit/hook.js';
import { auditedAction, auditedSelection, selectionOf, selectionRouteOptions } from '../admin/index.js';
import { ADMIN_HELD_APPROVE_PATH, ADMIN_HELD_REJECT_PATH, heldActionRequestSchema, heldActionResultSchema } from '../../shared/admin/held-api.js';
import { MAIL_DISABLED_CODE } from '../../shared/admin/waitlist-api.js';
import { CHALLENGE_PATH } from '../../shared/waitlist/challenge-contract.js';
import { approveHeld, rejectHeld } from './held-actions.js';
import { challengeIssuer } from './pow.js';

/** Challenges per client address per signup window: a few per signup allowed (a retry, an expired one fetched again). */
export const CHALLENGES_PER_SIGNUP = 3;

/**
 * GET CHALLENGE_PATH (challenge-contract.ts): a fresh signed challenge, never cached, rate limited
 * per client address in the signups' store (shared by every instance where signups are). Absent
 * (404) while SIGNUP_CHALLENGE is off. Issuing costs one random salt, one SHA-256 and one HMAC.
 */
export async function challengeRoutes(app: FastifyInstance): Promise<void> {
  if (app.config.challenge.mode === 'off') return;
  const issuer = challengeIssuer(app.secretBox, app.config.challenge);
  const { max, windowMs } = app.config.signupRateLimit;
  const limit = clientRateLimitHook({
    store: app.rateLimits.signups,
    kind: 'challenge',
    max: max * CHALLENGES_PER_SIGNUP,
    windowMs,
    error: () => new HttpError(429, 'rate_limited', 'Too many requests. Please wait a minute and try again.'),
    storeError: (err) => (isDatabaseUnavailable(err) ? new HttpError(503, 'unavailable', 'Please try again in a minute.') : err instanceof Error ? err : new Error(String(err))),
  });
  app.get(CHALLENGE_PATH, { onRequest: limit }, async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    return issuer.issue();
  });
}

/**
 * The admin's Approve and Reject of held signups (shared/admin/held-api.ts), admin-only like the
 * rest of the admin API, each one transaction with its audit records (admin's auditedAction).
 */
export async function heldRoutes(instance: FastifyInstance): Promise<void> {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const { db } = app.database;
  app.guardAdminScope();

  app.post(ADMIN_HELD_APPROVE_PATH, { config: { role: 'admin' }, ...selectionRouteOptions(heldActionRequestSchema, heldActionResultSchema) }, async (request) => {
    const admin = app.adminOf(request);
    const { confirmation, welcome } = app.config.consent;
    if (confirmation === 'required' && !app.mail.enabled) {
      throw new HttpError(409, MAIL_DISABLED_CODE, 'E-mail is off: set SMTP_URL, MAIL_FROM and PUBLIC_URL to send the confirmation e-mails.');
    }
    const selection = selectionOf(request.body);
    const count = await auditedAction(db, { admin, ip: request.ip }, 'held_approve', async (trx, audit) => {
      const approved = await approveHeld(trx, selection, { confirmation, welcome, mail: app.mail, webhooks: app.webhooks, now: new Date() });
      await audit({ count: approved, ...auditedSelection(selection, app.secretBox) });
      return approved;
    });
    request.log.info({ approved: count, actor: admin.userId }, 'held signups approved');
    // They are signups now: open admin pages refresh their rows and counts.
    if (count > 0) app.liveWaitlist.changed('approved');
    return { count };
  });

  app.post(ADMIN_HELD_REJECT_PATH, { config: { role: 'admin' }, ...selectionRouteOptions(heldActionRequestSchema, heldActionResultSchema) }, async (request) => {
    const admin = app.adminOf(request);
    const selection = selectionOf(request.body);
    // Like a delete: ids and keyed hashes of the addresses, never the addresses, one record per chunk, then the summary.
    const count = await auditedAction(db, { admin, ip: request.ip }, 'held_reject', async (trx, audit) => {
      const rejected = await rejectHeld(trx, selection, async (rows) => {
        await audit({ part: true, count: rows.length, ids: rows.map((r) => r.id), email_hashes: rows.map((r) => auditEmailHash(app.secretBox, r.email)) });
      });
      await audit({ count: rejected, ...auditedSelection(selection, app.secretBox) });
      return rejected;
    });
    request.log.info({ rejected: count, actor: admin.userId }, 'held signups rejected');
    if (count > 0) {
      app.liveWaitlist.changed('deleted');
      scrubDeletedRowsSoon(db, request.log);
    }
    return { count };
  });
}
