import {
  ADMIN_MAIL_PATH,
  ADMIN_OUTBOX_PATH,
  ADMIN_OUTBOX_RETRY_PATH,
  mailStatusSchema,
  outboxPageSchema,
  retryResultSchema,
  type MailStatus,
  type OutboxPage,
  type OutboxPageQuery,
  type RetryRequest,
} from '../../../shared/admin/mail-api.js';
import { postJson, readJson, request } from '../common/admin-api.js';

/** Whether e-mail is on, its settings and the outbox's counts. */
export async function fetchMailStatus(signal?: AbortSignal): Promise<MailStatus> {
  return readJson(await request(ADMIN_MAIL_PATH, { signal }), mailStatusSchema);
}

/** One page of outbox messages (no bodies), newest first; `status` undefined = every status. */
export async function fetchOutboxPage(query: OutboxPageQuery, signal?: AbortSignal): Promise<OutboxPage> {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value));
  return readJson(await request(`${ADMIN_OUTBOX_PATH}?${params.toString()}`, { signal }), outboxPageSchema);
}

/** Queues the failed messages among `ids` again; returns how many were. */
export async function retryOutboxMessages(ids: string[]): Promise<number> {
  const response = await postJson(ADMIN_OUTBOX_RETRY_PATH, { ids } satisfies RetryRequest);
  return (await readJson(response, retryResultSchema)).retried;
}
