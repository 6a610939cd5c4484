import type { z } from 'zod/mini';
import {
  API_V1_ENTRIES_PATH,
  API_V1_EXPORT_DOWNLOAD_PATH,
  API_V1_EXPORTS_PATH,
  API_V1_SIGNUPS_PATH,
  apiEntriesPageSchema,
  apiEntriesQuerySchema,
  apiEntrySchema,
  apiExportDownloadSchema,
  apiExportRequestSchema,
  apiExportSchema,
  apiExportStatusSchema,
  apiIdParamsSchema,
  apiSignupRequestSchema,
  apiSignupResultSchema,
  PORTAL_LIST,
} from '../../shared/api/v1.js';
import type { ApiScope } from '../../shared/api/scopes.js';

/**
 * The API's operations, declared once: routes.ts registers each with these schemas (Fastify
 * validates requests and serializes answers with them), and openapi.ts writes the OpenAPI document
 * from the same objects. A schema changed here changes both.
 */
export interface ApiOperation {
  operationId: string;
  method: 'GET' | 'POST';
  /** Fastify's form (`:id`); the document writes `{id}`. */
  url: string;
  summary: string;
  description: string;
  /** The key's scope this needs; null: no key (the ticket is the credential). */
  scope: ApiScope | null;
  querystring?: z.ZodMiniType;
  params?: z.ZodMiniType;
  body?: z.ZodMiniType;
  /** Also accepted as a form (application/x-www-form-urlencoded). */
  formBody?: boolean;
  /** The success answer: its status and JSON schema, or a CSV file. */
  success: { status: number; description: string; schema: z.ZodMiniType } | { status: number; description: string; csv: true };
  /** The error answers it can give besides 401/403/429 (each `{error:{code,message}}`), with their codes. */
  errors: Record<number, string>;
}

const KEY_ERRORS = {
  401: '`unauthorized` (no or unknown key), `key_revoked`, `key_expired`',
  403: '`insufficient_scope`: the key lacks the scope, or `cross_site_request`',
  429: '`rate_limited`: past the key\'s requests per minute (see Retry-After), or too many invalid keys from this address',
};

export const API_OPERATIONS = {
  createSignup: {
    operationId: 'createSignup',
    method: 'POST',
    url: API_V1_SIGNUPS_PATH,
    summary: 'Add a signup',
    description:
      `Adds an address to the waitlist as the signup form does: the same address rule, consent record and e-mails (the confirmation when double opt-in is on). ` +
      `\`list\`: \`${PORTAL_LIST}\` (the default) or an open offering list's slug, joined as its page's form does, with the optional non-binding \`intended_amount\` (one of the list's band keys); ` +
      `\`consent\` is asked for the portal's list only (an offering page shows its statements, no checkbox). \`ip_address\` is the visitor's, when known (its location is looked up); ` +
      'the calling server\'s address is never stored as the person\'s. Attribution fields are cleaned like the form\'s and dropped when invalid. Audited.',
    scope: 'signups:write',
    body: apiSignupRequestSchema,
    success: { status: 201, description: 'Stored (or, for a pending or unsubscribed address, signed up again).', schema: apiSignupResultSchema },
    errors: {
      400: '`email_required`, `email_invalid`, `email_too_long`, `unknown_list` (a draft or unknown list), `amount_invalid`, `invalid_ip_address`, `consent_required`, `bad_request`',
      409: '`already_registered`, `list_closed` (the offering list takes no more signups)',
      422: '`email_disposable`, `email_undeliverable`: the address\'s domain is refused by the signup\'s screening',
      503: '`unavailable`: the database cannot take signups now (see Retry-After)',
    },
  },
  listEntries: {
    operationId: 'listEntries',
    method: 'GET',
    url: API_V1_ENTRIES_PATH,
    summary: 'List entries',
    description:
      'Entries newest first, filtered like the admin\'s table (the same names: `q`, `from`, `to`, `country`, `source`, `campaign`, `status`; ' +
      '`list`, an offering list\'s slug, reads that list instead of the portal\'s waitlist). ' +
      'Page with `cursor` (the previous page\'s `nextCursor`) until it is null; `total` and `matching` are counted on the first page only.',
    scope: 'entries:read',
    querystring: apiEntriesQuerySchema,
    success: { status: 200, description: 'One page.', schema: apiEntriesPageSchema },
    errors: { 400: '`invalid_filter`, `invalid_cursor`, `bad_request`' },
  },
  getEntry: {
    operationId: 'getEntry',
    method: 'GET',
    url: `${API_V1_ENTRIES_PATH}/:id`,
    summary: 'Read one entry',
    description: 'One entry by its id.',
    scope: 'entries:read',
    params: apiIdParamsSchema,
    success: { status: 200, description: 'The entry.', schema: apiEntrySchema },
    errors: { 400: '`bad_request`', 404: '`not_found`' },
  },
  startExport: {
    operationId: 'startExport',
    method: 'POST',
    url: API_V1_EXPORTS_PATH,
    summary: 'Start an export',
    description:
      'Prepares a CSV export (all entries; named `ids`; or a `filter` but `except`) and answers a one-time ticket. POST the ticket to `downloadUrl` before `expiresAt` to receive the file; ' +
      'the export is audited when it is downloaded. The key must still be valid then.',
    scope: 'export',
    body: apiExportRequestSchema,
    success: { status: 201, description: 'The export, ready to download once.', schema: apiExportSchema },
    errors: { 400: '`invalid_filter`, `invalid_time_zone`, `bad_request`' },
  },
  getExport: {
    operationId: 'getExport',
    method: 'GET',
    url: `${API_V1_EXPORTS_PATH}/:id`,
    summary: 'Follow an export',
    description: 'Whether an export this key started is ready, running, done (with its row count), failed or expired.',
    scope: 'export',
    params: apiIdParamsSchema,
    success: { status: 200, description: 'Its progress.', schema: apiExportStatusSchema },
    errors: { 400: '`bad_request`', 404: '`not_found`' },
  },
  downloadExport: {
    operationId: 'downloadExport',
    method: 'POST',
    url: API_V1_EXPORT_DOWNLOAD_PATH,
    summary: 'Download an export',
    description: 'Exchanges an export\'s one-time ticket for the CSV file (JSON `{ticket}` or a form). No key needed: the ticket is the credential, and the key that made it must still be valid.',
    scope: null,
    body: apiExportDownloadSchema,
    formBody: true,
    success: { status: 200, description: 'The CSV file.', csv: true },
    errors: { 400: '`bad_request`', 401: '`unauthorized`: the key that made the ticket is revoked or expired', 410: '`ticket_used`: used, expired or unknown' },
  },
} as const satisfies Record<string, ApiOperation>;

/** The errors every operation with a key can answer. */
export const KEY_ERROR_CODES: Record<number, string> = KEY_ERRORS;
