import { z } from 'zod/mini';
import {
  exportDownloadFormSchema,
  exportDownloadParamsSchema,
  exportDownloadSchema,
  exportDownloadStatusSchema,
  exportRequestSchema,
  waitlistPageQuerySchema,
  waitlistPageSchema,
} from '../admin/waitlist-api.js';
import { ATTRIBUTION_FIELDS, type AttributionField } from '../waitlist/attribution.js';
import { waitlistEntrySchema } from '../waitlist/entry.js';

/**
 * The versioned API for integrations (issue 32 point 2), declared once: the server's routes take
 * these schemas, and the OpenAPI 3.1 document at API_V1_OPENAPI_PATH is generated from them
 * (src/server/api/openapi.ts), so the document cannot drift from what the routes accept and answer.
 * The listing and the export reuse the admin API's contracts (src/shared/admin/waitlist-api.ts):
 * the same filter, keyset cursor, entry and export request.
 *
 * Every call but the document and the download needs `Authorization: Bearer wl_…` (scopes.ts).
 */
export const API_V1_PREFIX = '/api/v1';
export const API_V1_OPENAPI_PATH = `${API_V1_PREFIX}/openapi.json`;
export const API_DOCS_PATH = '/api/docs';
export const API_V1_SIGNUPS_PATH = `${API_V1_PREFIX}/signups`;
export const API_V1_ENTRIES_PATH = `${API_V1_PREFIX}/entries`;
export const API_V1_EXPORTS_PATH = `${API_V1_PREFIX}/exports`;
export const API_V1_EXPORT_DOWNLOAD_PATH = `${API_V1_EXPORTS_PATH}/download`;

/** The list a signup joins by default: the portal's (signup-contract.ts); `list` may name an open offering list instead. */
export { PORTAL_LIST } from '../waitlist/signup-contract.js';

/** Every error: a stable code and a message for people. */
export const apiErrorSchema = z.object({ error: z.object({ code: z.string(), message: z.string() }) });
export type ApiErrorBody = z.infer<typeof apiErrorSchema>;

const attributionText = z.optional(z.string().check(z.maxLength(2048)));
const attributionShape = Object.fromEntries(ATTRIBUTION_FIELDS.map((field) => [field, attributionText])) as Record<AttributionField, typeof attributionText>;

/**
 * POST /api/v1/signups. `email` is checked by the signup form's rule (400 `email_required`,
 * `email_invalid`, `email_too_long`; 409 `already_registered`). `list`: absent or `portal` joins the
 * portal's waitlist; an open offering list's slug joins that list, as its page's form does (a draft
 * or unknown one is 400 `unknown_list`, a closed one 409 `list_closed`), with `intended_amount`, one
 * of the list's amount bands (src/shared/lists/contract.ts; 400 `amount_invalid` otherwise, and for
 * the portal's list, which has none). `ip_address`: the visitor's address, when the integration
 * knows it (its location is looked up as for the form); the calling server's own address is never
 * stored as the person's. The attribution fields are cleaned as the form's are
 * (src/shared/waitlist/attribution.ts) and dropped when invalid.
 */
export const apiSignupRequestSchema = z.object({
  email: z.string().check(z.maxLength(1024)),
  list: z.optional(z.string().check(z.maxLength(100))),
  /** An offering list's non-binding intended amount: one of its band keys (`1000-5000`, `25000-`), or empty for none. */
  intended_amount: z.optional(z.string().check(z.maxLength(40))),
  ip_address: z.optional(z.string().check(z.maxLength(64))),
  /** Required (true) only when the site shows a consent checkbox (content.ts `consent.checkbox`): the person ticked it. */
  consent: z.optional(z.boolean()),
  ...attributionShape,
});
export type ApiSignupRequest = z.infer<typeof apiSignupRequestSchema>;

/** The entry the signup made or found: `pending` when double opt-in is on and the confirmation e-mail is queued. */
export const apiSignupResultSchema = z.object({ id: z.string(), status: z.enum(['joined', 'pending']) });
export type ApiSignupResult = z.infer<typeof apiSignupResultSchema>;

/** GET /api/v1/entries: the admin list's query (limit, cursor and the filter) and page. */
export const apiEntriesQuerySchema = waitlistPageQuerySchema;
export const apiEntriesPageSchema = waitlistPageSchema;
/** GET /api/v1/entries/{id} and GET /api/v1/exports/{id}. */
export const apiIdParamsSchema = exportDownloadParamsSchema;
export const apiEntrySchema = waitlistEntrySchema;

/** POST /api/v1/exports: the admin export's request (selection, time zone, attribution columns). */
export const apiExportRequestSchema = exportRequestSchema;
/**
 * The export, prepared: POST its one-time `ticket` to `downloadUrl` within the ticket's life
 * (JSON `{ticket}` or a form) to receive the CSV; GET /api/v1/exports/{id} tells how it went.
 */
export const apiExportSchema = z.extend(exportDownloadSchema, { downloadUrl: z.string() });
export type ApiExport = z.infer<typeof apiExportSchema>;
export const apiExportStatusSchema = exportDownloadStatusSchema;
export const apiExportDownloadSchema = exportDownloadFormSchema;
