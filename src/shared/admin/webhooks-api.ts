import { z } from 'zod/mini';
import { UUID_PATTERN } from './waitlist-api.js';

/**
 * The admin webhooks API (src/server/webhooks), declared once for the admin page, the server, the CLI
 * and the tests. Every call needs `Authorization: Bearer <access_token>` of a signed-in admin.
 *
 * GET  /api/admin/webhooks                          -> WebhookList (endpoints, the event types, the cap)
 * POST /api/admin/webhooks  {url, events?}          -> CreatedWebhook (201): the endpoint and its
 *      secret, shown this once. `events` omitted or empty = every event.
 * POST /api/admin/webhooks/:id/enable | /disable    -> WebhookEndpointView
 * POST /api/admin/webhooks/:id/rotate               -> CreatedWebhook: the new secret, shown once;
 *      the previous one keeps signing (both signatures sent) until `previousSecretUntil`.
 * POST /api/admin/webhooks/:id/remove               -> {removed: true}; its deliveries go with it.
 * GET  /api/admin/webhooks/:id/deliveries            -> DeliveryList (the most recent first)
 * POST /api/admin/webhooks/deliveries/:id/replay    -> DeliveryView: the event queued again to
 *      that endpoint now, as a new delivery (same `webhook-id`).
 *
 * Errors are JSON `{error: {code, message}}`: 400 `bad_request` / `invalid_url` / `private_address`,
 * 404 `not_found`, 409 `too_many_endpoints` / `endpoint_disabled`. Every change is audit-logged
 * (the endpoint's id and origin, never its secret or path).
 */
export const ADMIN_WEBHOOKS_PATH = '/api/admin/webhooks';
export const adminWebhookPath = (id: string, action: 'enable' | 'disable' | 'rotate' | 'remove' | 'deliveries') => `${ADMIN_WEBHOOKS_PATH}/${id}/${action}`;
export const adminReplayPath = (deliveryId: string) => `${ADMIN_WEBHOOKS_PATH}/deliveries/${deliveryId}/replay`;

/** The events an endpoint can take; `signup.erased` carries the entry's id only, never the address. */
export const WEBHOOK_EVENT_TYPES = ['signup.created', 'signup.confirmed', 'signup.unsubscribed', 'signup.erased', 'invite.sent'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** The longest URL an endpoint may have. */
export const WEBHOOK_URL_MAX = 2000;
/** Deliveries shown per endpoint. */
export const WEBHOOK_DELIVERIES_SHOWN = 50;

export const WEBHOOK_DELIVERY_STATUSES = ['queued', 'sending', 'delivered', 'failed'] as const;

export const webhookEndpointSchema = z.object({
  id: z.string(),
  url: z.string(),
  /** The subscribed types; empty = every event. */
  events: z.array(z.string()),
  enabled: z.boolean(),
  /** Why it was disabled (by an admin, or the receiver answered 410 Gone); null while enabled. */
  disabledReason: z.nullable(z.string()),
  /** While a rotation's overlap lasts: when the previous secret stops signing. */
  previousSecretUntil: z.nullable(z.string()),
  createdAt: z.string(),
});
export type WebhookEndpointView = z.infer<typeof webhookEndpointSchema>;

export const webhookListSchema = z.object({
  endpoints: z.array(webhookEndpointSchema),
  eventTypes: z.array(z.string()),
  maxEndpoints: z.number(),
});
export type WebhookList = z.infer<typeof webhookListSchema>;

export const createWebhookSchema = z.object({
  url: z.string().check(z.minLength(1), z.maxLength(WEBHOOK_URL_MAX)),
  events: z.optional(z.array(z.enum(WEBHOOK_EVENT_TYPES)).check(z.maxLength(WEBHOOK_EVENT_TYPES.length))),
});
export type CreateWebhookRequest = z.infer<typeof createWebhookSchema>;

export const createdWebhookSchema = z.object({
  endpoint: webhookEndpointSchema,
  /** `whsec_…`: shown this once; only its sealed form is stored. */
  secret: z.string(),
});
export type CreatedWebhook = z.infer<typeof createdWebhookSchema>;

export const webhookIdParamsSchema = z.object({ id: z.string().check(z.regex(new RegExp(UUID_PATTERN))) });

export const webhookDeliverySchema = z.object({
  id: z.string(),
  eventId: z.string(),
  eventType: z.string(),
  status: z.enum(WEBHOOK_DELIVERY_STATUSES),
  attempts: z.number(),
  /** The HTTP status of the last answer; null when there was none (refused, timed out). */
  responseStatus: z.nullable(z.number()),
  lastError: z.nullable(z.string()),
  createdAt: z.string(),
  nextAttemptAt: z.string(),
  finishedAt: z.nullable(z.string()),
});
export type WebhookDeliveryView = z.infer<typeof webhookDeliverySchema>;

export const webhookDeliveryListSchema = z.object({ deliveries: z.array(webhookDeliverySchema) });
export type WebhookDeliveryList = z.infer<typeof webhookDeliveryListSchema>;

export const removedWebhookSchema = z.object({ removed: z.literal(true) });
