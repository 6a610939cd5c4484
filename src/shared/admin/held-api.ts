import { z } from 'zod/mini';
import { inviteRequestSchema } from './waitlist-api.js';

/**
 * Held signups (status `held`: no valid proof-of-work solution, SIGNUP_CHALLENGE=proof-of-work;
 * issue 28 point 4), approved or rejected by an admin, one or many, like the other actions on a
 * selection (named ids, or every entry matching a filter but `except`). Only held entries of the
 * selection are touched; the rest are left alone and not counted. Each action is audited.
 *
 * POST ADMIN_HELD_APPROVE_PATH {ids | filter + except?} -> HeldActionResult: each held entry joins
 *      as a signup would (pending with its confirmation e-mail when SIGNUP_CONFIRMATION=required,
 *      else joined, with the welcome e-mail when MAIL_WELCOME=on)
 * POST ADMIN_HELD_REJECT_PATH  {ids | filter + except?} -> HeldActionResult: each held entry is deleted
 */
export const ADMIN_HELD_APPROVE_PATH = '/api/admin/waitlist/held/approve';
export const ADMIN_HELD_REJECT_PATH = '/api/admin/waitlist/held/reject';

export const heldActionRequestSchema = inviteRequestSchema;
export type HeldActionRequest = z.input<typeof heldActionRequestSchema>;

/** How many held entries were approved or rejected. */
export const heldActionResultSchema = z.object({ count: z.number() });
export type HeldActionResult = z.infer<typeof heldActionResultSchema>;
