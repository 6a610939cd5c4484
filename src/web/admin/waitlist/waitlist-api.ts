import {
  ADMIN_DELETE_MATCHING_PATH,
  ADMIN_DELETE_PATH,
  ADMIN_INVITE_PATH,
  ADMIN_WAITLIST_PATH,
  deleteMatchingResultSchema,
  deleteResultSchema,
  inviteResultSchema,
  waitlistPageSchema,
  type DeleteRequest,
  type DeleteResult,
  type InviteRequest,
  type InviteResult,
  type MatchingSelection,
  type WaitlistPage,
} from '../../../shared/admin/waitlist-api.js';
import { filterToSearchParams, type WaitlistFilter } from '../../../shared/admin/waitlist-filter.js';
import { postJson, readJson, request } from '../common/admin-api.js';

/** One page of the waitlist matching `filter`, newest first; counts only on the first (no `cursor`). */
export async function fetchWaitlistPage(
  { limit, cursor = null, filter = {} }: { limit: number; cursor?: string | null; filter?: WaitlistFilter },
  signal?: AbortSignal,
): Promise<WaitlistPage> {
  const params = new URLSearchParams({ limit: String(limit) });
  if (cursor) params.set('cursor', cursor);
  filterToSearchParams(filter, params);
  const response = await request(`${ADMIN_WAITLIST_PATH}?${params.toString()}`, { signal });
  return readJson(response, waitlistPageSchema);
}

export async function deleteWaitlistEntries(ids: string[]): Promise<DeleteResult> {
  const response = await postJson(ADMIN_DELETE_PATH, { ids } satisfies DeleteRequest);
  return readJson(response, deleteResultSchema);
}

/** Deletes every entry matching the selection's filter but its `except`; returns how many went. */
export async function deleteMatchingEntries(selection: MatchingSelection): Promise<number> {
  const response = await postJson(ADMIN_DELETE_MATCHING_PATH, selection);
  return (await readJson(response, deleteMatchingResultSchema)).deleted;
}

/** Marks the joined and confirmed entries among `ids` invited and queues their invites; counts the rest. */
export async function inviteWaitlistEntries(ids: string[]): Promise<InviteResult> {
  const response = await postJson(ADMIN_INVITE_PATH, { ids } satisfies InviteRequest);
  return readJson(response, inviteResultSchema);
}

/** As inviteWaitlistEntries, for every entry matching the selection's filter but its `except`. */
export async function inviteMatchingEntries(selection: MatchingSelection): Promise<InviteResult> {
  const response = await postJson(ADMIN_INVITE_PATH, selection satisfies InviteRequest);
  return readJson(response, inviteResultSchema);
}
