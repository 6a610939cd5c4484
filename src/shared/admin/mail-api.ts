import { z } from 'zod/mini';
import { UUID_PATTERN } from './waitlist-api.js';

/**
 * The admin e-mail API, declared once for the admin page, the server and the tests. Every call
 * needs `Authorization: Bearer <access_token>` of a signed-in admin, as for the waitlist API.
 *
 * GET  /api/admin/mail                                   -> MailStatus (settings, outbox counts)
 * GET  /api/admin/mail/outbox?status=S&limit=N&cursor=C   -> OutboxPage (newest first, keyset
 *      pagination, no bodies; status omitted = every status)
 * POST /api/admin/mail/outbox/retry  {ids}               -> RetryResult: the failed messages among
 *      `ids` are queued again now with their attempts reset (the last error stays until one is
 *      sent); other ids (unknown, queued, sending, sent) are ignored. Audit-logged.
 *
 * Errors are JSON `{error: {code, message}}`: 401 `unauthorized`, 400 `bad_request` (validation),
 * 400 `invalid_cursor`, 409 `mail_disabled` (a retry while e-mail is off: nothing could send it).
 * GET /api/admin/mail works when e-mail is off: `enabled` is false.
 */
export const ADMIN_MAIL_PATH = '/api/admin/mail';
export const ADMIN_OUTBOX_PATH = `${ADMIN_MAIL_PATH}/outbox`;
export const ADMIN_OUTBOX_RETRY_PATH = `${ADMIN_OUTBOX_PATH}/retry`;
export const OUTBOX_PAGE_MAX = 500;
export const OUTBOX_DEFAULT_PAGE_SIZE = 50;
/** Most ids one retry may name (a launch's failed invites, selected at once). */
export const OUTBOX_RETRY_MAX_IDS = 100_000;

export const OUTBOX_STATUSES = ['queued', 'sending', 'sent', 'failed'] as const;
export type OutboxStatus = (typeof OUTBOX_STATUSES)[number];

export const mailStatusSchema = z.object({
  /** False without SMTP_URL: nothing is sent, invites and retries are refused. */
  enabled: z.boolean(),
  /** SIGNUP_CONFIRMATION. */
  confirmation: z.enum(['off', 'required']),
  /** MAIL_WELCOME is on. */
  welcome: z.boolean(),
  /** MAIL_FROM, or null when e-mail is off. */
  from: z.nullable(z.string()),
  /** Outbox messages by status (retention deletes sent and failed ones after MAIL_RETENTION_DAYS). */
  counts: z.object({ queued: z.number(), sending: z.number(), sent: z.number(), failed: z.number() }),
});
export type MailStatus = z.infer<typeof mailStatusSchema>;

export const outboxPageQuerySchema = z.object({
  status: z.optional(z.enum(OUTBOX_STATUSES)),
  // Query values arrive as text.
  limit: z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(OUTBOX_PAGE_MAX)), OUTBOX_DEFAULT_PAGE_SIZE),
  cursor: z.optional(z.string().check(z.minLength(1), z.maxLength(200))),
});
export type OutboxPageQuery = z.input<typeof outboxPageQuerySchema>;

/** One outbox message as the admin sees it: what, to whom, what became of it; never its body. */
export const outboxMessageSchema = z.object({
  id: z.string(),
  /** `confirmation`, `welcome`, `invite`, `test`… */
  kind: z.string(),
  to: z.string(),
  subject: z.string(),
  status: z.enum(OUTBOX_STATUSES),
  attempts: z.number(),
  /** What the SMTP server (or the renderer) said last time; kept after a retry until one is sent. */
  lastError: z.nullable(z.string()),
  /** ISO-8601 UTC timestamps. */
  createdAt: z.string(),
  nextAttemptAt: z.string(),
  sentAt: z.nullable(z.string()),
});
export type OutboxMessageView = z.infer<typeof outboxMessageSchema>;

export const outboxPageSchema = z.object({
  messages: z.array(outboxMessageSchema),
  /** Pass back as `cursor` for the next page; null on the last page. */
  nextCursor: z.nullable(z.string()),
});
export type OutboxPage = z.infer<typeof outboxPageSchema>;

export const retryRequestSchema = z.object({
  ids: z.array(z.string().check(z.regex(new RegExp(UUID_PATTERN)))).check(z.minLength(1), z.maxLength(OUTBOX_RETRY_MAX_IDS)),
});
export type RetryRequest = z.infer<typeof retryRequestSchema>;

export const retryResultSchema = z.object({ retried: z.number() });
export type RetryResult = z.infer<typeof retryResultSchema>;
