import { z } from 'zod/mini';
import {
  boundariesProblem,
  LIST_KINDS,
  LIST_STATES,
  MAX_BAND_AMOUNT,
  MAX_BAND_BOUNDARIES,
  MAX_LIST_DESCRIPTION_LENGTH,
  MAX_LIST_NAME_LENGTH,
  SLUG_PATTERN,
} from '../lists/contract.js';

/**
 * The admin's lists (issue 31): the portal's waitlist and the offering lists.
 *
 * GET   /api/admin/lists              -> {lists: ListView[]} (viewer): the portal's first, then by slug
 * POST  /api/admin/lists              {slug, name, description?, kind, bands?} -> ListView (201, admin): a draft
 * PATCH /api/admin/lists/:slug        {name?, description?, state?, bands?} -> ListView (admin)
 *
 * Errors: 400 `bad_request` (validation), 404 `not_found` (no such offering list; the portal's
 * cannot be edited here), 409 `slug_taken`. Every change is audited.
 */
export const ADMIN_LISTS_PATH = '/api/admin/lists';
export const adminListPath = (slug: string) => `${ADMIN_LISTS_PATH}/${encodeURIComponent(slug)}`;

/** The admin page's query parameter naming the list shown (absent: the portal's). */
export const LIST_PARAM = 'list';

export const listViewSchema = z.object({
  slug: z.string(),
  kind: z.enum(['portal', ...LIST_KINDS]),
  state: z.enum(LIST_STATES),
  /** The issuer's name (the portal's: the product's name). */
  name: z.string(),
  description: z.string(),
  /** The amount bands' boundaries in whole dollars, or null: the page asks no amount. */
  bands: z.nullable(z.array(z.number())),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type ListView = z.infer<typeof listViewSchema>;

export const listsResultSchema = z.object({ lists: z.array(listViewSchema) });
export type ListsResult = z.infer<typeof listsResultSchema>;

const nameSchema = z.string().check(z.trim(), z.minLength(1), z.maxLength(MAX_LIST_NAME_LENGTH));
const descriptionSchema = z.string().check(z.trim(), z.maxLength(MAX_LIST_DESCRIPTION_LENGTH));
const bandsSchema = z.nullable(
  z
    .array(z.number().check(z.int(), z.minimum(1), z.maximum(MAX_BAND_AMOUNT)))
    .check(z.maxLength(MAX_BAND_BOUNDARIES), z.refine((b) => b.length === 0 || boundariesProblem(b) === null, { message: 'Amount bands must increase.' })),
);

export const createListSchema = z.object({
  slug: z.string().check(z.regex(SLUG_PATTERN), z.refine((s) => s !== 'portal', { message: 'The slug portal is the waitlist’s own.' })),
  name: nameSchema,
  description: z.optional(descriptionSchema),
  kind: z.enum(LIST_KINDS),
  bands: z.optional(bandsSchema),
});
export type CreateListRequest = z.input<typeof createListSchema>;

export const updateListSchema = z.object({
  name: z.optional(nameSchema),
  description: z.optional(descriptionSchema),
  state: z.optional(z.enum(LIST_STATES)),
  bands: z.optional(bandsSchema),
});
export type UpdateListRequest = z.input<typeof updateListSchema>;

export const listParamsSchema = z.object({ slug: z.string().check(z.regex(SLUG_PATTERN)) });

/** One band's indications in the insight panel: how many, and what they add up to at the band's ends. */
export const bandSumSchema = z.object({
  key: z.string(),
  label: z.string(),
  count: z.number(),
  /** count × the band's lower end, and × its upper end (null: the band has none). */
  min: z.number(),
  max: z.nullable(z.number()),
});
export type BandSum = z.infer<typeof bandSumSchema>;
