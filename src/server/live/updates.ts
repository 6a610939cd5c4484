import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { MAX_MESSAGE_BYTES, type PubSub } from '../pubsub/index.js';
import { waitlistEventSchemas, type WaitlistEvent } from '../../shared/admin/waitlist-api.js';
import { toWaitlistEntry, WAITLIST_COLUMNS } from '../db/waitlist-entries.js';

/**
 * Live updates of the admin (issue 10 point 4): every instance tells the others, through the
 * deployment's pub/sub (src/server/pubsub), which entries signed up and what else changed; each
 * instance turns that into events on its open admin streams (live/routes.ts).
 *
 * Only ids travel between instances: an entry holds personal data, which stays in the database
 * (and out of Redis), and a message must fit PostgreSQL's 8000-byte NOTIFY payload. An instance
 * reads the entries of a message once, with one query, and only while it has a stream open.
 */

export type WaitlistChangeReason = Extract<WaitlistEvent, { type: 'change' }>['data']['reason'];

export interface LiveWaitlist {
  /**
   * An entry was stored (a signup, or an unsubscribed address back): call after the commit. Costs
   * an array push; the ids go out together at most every SIGNUP_INTERVAL_MS.
   */
  signedUp(id: string): void;
  /** Entries were deleted, invited, confirmed, unsubscribed or imported: open pages' counts and panels are stale. */
  changed(reason: WaitlistChangeReason): void;
  /** Resolves once other instances' messages reach this one (subscribes on the first call). */
  ready(): Promise<void>;
  /** Adds an open stream: `send` gets each event as text/event-stream text. Returns the removal. */
  listen(send: (text: string) => void): () => void;
  /** How many streams are open on this instance. */
  readonly streams: number;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Live updates for the admin's event streams (live/updates.ts). */
    liveWaitlist: LiveWaitlist;
  }
}

/** The pub/sub channel of these messages. */
export const LIVE_CHANNEL = 'waitlist_live';
/** Signups are published at most this often per instance. */
export const SIGNUP_INTERVAL_MS = 250;
/** Each change reason is published at most this often per instance. */
export const CHANGE_INTERVAL_MS = 1000;
/** At most one error line per this interval while publishing or reading keeps failing. */
const FAILURE_LOG_INTERVAL_MS = 30_000;

const CHANGE_REASONS: ReadonlySet<string> = new Set(waitlistEventSchemas.change.shape.reason.options);

/** One event as text/event-stream text. JSON never holds a raw line break, so `data` is one line. */
export function formatEvent(event: WaitlistEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event.data)}\n\n`;
}

/**
 * A message between instances, in short keys (the NOTIFY payload is small): `o` the sending
 * instance, then either `s` the ids of stored entries or `c` a change reason.
 */
type Message = { o: string; s: string[] } | { o: string; c: WaitlistChangeReason };

/** Ids are UUIDs; anything much longer is not one of ours. */
const MAX_ID_LENGTH = 64;

function parseMessage(text: string): Message | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const { o, s, c } = value as Record<string, unknown>;
  if (typeof o !== 'string') return null;
  if (Array.isArray(s) && s.length > 0 && s.every((id) => typeof id === 'string' && id.length <= MAX_ID_LENGTH)) return { o, s: s as string[] };
  if (typeof c === 'string' && CHANGE_REASONS.has(c)) return { o, c: c as WaitlistChangeReason };
  return null;
}

/** Splits ids into signup messages that each fit the pub/sub payload limit (UUIDs: about 200 a message). */
export function signupMessages(origin: string, ids: readonly string[], maxBytes: number = MAX_MESSAGE_BYTES): Array<{ ids: string[]; message: string }> {
  const batches: Array<{ ids: string[]; message: string }> = [];
  const emptyBytes = Buffer.byteLength(JSON.stringify({ o: origin, s: [] } satisfies Message));
  let batch: string[] = [];
  let bytes = emptyBytes;
  const push = () => batches.push({ ids: batch, message: JSON.stringify({ o: origin, s: batch } satisfies Message) });
  for (const id of ids) {
    // The id in quotes, and a comma before every id but the first.
    const idBytes = Buffer.byteLength(JSON.stringify(id));
    if (batch.length > 0 && bytes + 1 + idBytes > maxBytes) {
      push();
      batch = [];
      bytes = emptyBytes;
    }
    bytes += idBytes + (batch.length > 0 ? 1 : 0);
    batch.push(id);
  }
  if (batch.length > 0) push();
  return batches;
}

export interface LiveWaitlistOptions {
  db: Kysely<Database>;
  pubsub: PubSub;
  log: Pick<FastifyBaseLogger, 'error' | 'warn'>;
}

/** The live updates of one instance; `close` publishes what is still pending and stops. */
export function createLiveWaitlist({ db, pubsub, log }: LiveWaitlistOptions): { live: LiveWaitlist; close(): Promise<void> } {
  /** Tells this instance's own messages apart: its streams got those events already. */
  const origin = randomBytes(8).toString('base64url');
  const listeners = new Set<(text: string) => void>();
  let closed = false;

  let lastFailureLogAt = -Infinity;
  const failed = (what: string) => (err: unknown) => {
    const at = performance.now();
    if (at - lastFailureLogAt < FAILURE_LOG_INTERVAL_MS) return;
    lastFailureLogAt = at;
    log.error({ err }, `live updates: ${what} failed (admin pages may miss updates meanwhile)`);
  };

  const broadcast = (text: string) => {
    for (const send of [...listeners]) send(text);
  };

  // Reads run one after another, so the streams get the batches in the order they came.
  let reading: Promise<void> = Promise.resolve();
  function deliverSignups(ids: string[]): void {
    if (listeners.size === 0) return;
    reading = reading.then(async () => {
      if (listeners.size === 0) return;
      try {
        const rows = await db
          .selectFrom('waitlist')
          .select([...WAITLIST_COLUMNS, 'list_id', 'intended_amount'])
          .where('id', 'in', ids)
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .execute();
        // Deleted meanwhile (or another deployment's ids on a shared Redis): nothing to say.
        // One event per list (issue 31): the portal's exactly as before, an offering list's named by its slug.
        const portal = rows.filter((r) => Number(r.list_id) === 0).map(({ list_id: _l, intended_amount: _a, ...row }) => toWaitlistEntry(row));
        if (portal.length > 0) broadcast(formatEvent({ type: 'signup', data: { entries: portal } }));
        const others = rows.filter((r) => Number(r.list_id) !== 0);
        if (others.length > 0) {
          const slugs = new Map((await db.selectFrom('lists').select(['id', 'slug']).where('id', 'in', [...new Set(others.map((r) => Number(r.list_id)))]).execute()).map((l) => [Number(l.id), l.slug]));
          for (const [id, slug] of slugs) {
            const entries = others.filter((r) => Number(r.list_id) === id).map(({ list_id: _l, ...row }) => toWaitlistEntry(row));
            broadcast(formatEvent({ type: 'signup', data: { entries, list: slug } }));
          }
        }
      } catch (err) {
        failed('reading new entries')(err);
      }
    });
  }

  function deliverChange(reason: WaitlistChangeReason): void {
    if (listeners.size > 0) broadcast(formatEvent({ type: 'change', data: { reason } }));
  }

  const publish = (message: string) => pubsub.publish(LIVE_CHANNEL, message).catch(failed('publishing'));

  // Signups: the hot path only pushes; one timer per window sends them.
  let pendingIds: string[] = [];
  let signupTimer: NodeJS.Timeout | null = null;
  let lastSignupFlushAt = -Infinity;
  function flushSignups(): Promise<unknown> {
    signupTimer = null;
    lastSignupFlushAt = performance.now();
    const ids = pendingIds;
    pendingIds = [];
    const sent: Array<Promise<unknown>> = [];
    for (const batch of signupMessages(origin, ids)) {
      sent.push(publish(batch.message));
      deliverSignups(batch.ids);
    }
    return Promise.all(sent);
  }

  const changeTimers = new Map<WaitlistChangeReason, NodeJS.Timeout>();
  const lastChangeAt = new Map<WaitlistChangeReason, number>();
  function flushChange(reason: WaitlistChangeReason): Promise<unknown> {
    changeTimers.delete(reason);
    lastChangeAt.set(reason, performance.now());
    deliverChange(reason);
    return publish(JSON.stringify({ o: origin, c: reason } satisfies Message));
  }

  const onMessage = (text: string) => {
    const message = parseMessage(text);
    if (!message) {
      log.warn('live updates: ignored a malformed message');
      return;
    }
    if (message.o === origin) return;
    if ('s' in message) deliverSignups(message.s);
    else deliverChange(message.c);
  };

  let subscribing: Promise<void> | null = null;
  let unsubscribe: (() => Promise<void>) | null = null;

  const live: LiveWaitlist = {
    signedUp(id) {
      if (closed) return;
      pendingIds.push(id);
      if (signupTimer) return;
      signupTimer = setTimeout(flushSignups, Math.max(0, lastSignupFlushAt + SIGNUP_INTERVAL_MS - performance.now()));
      signupTimer.unref();
    },
    changed(reason) {
      if (closed || changeTimers.has(reason)) return;
      const last = lastChangeAt.get(reason) ?? -Infinity;
      const timer = setTimeout(() => void flushChange(reason), Math.max(0, last + CHANGE_INTERVAL_MS - performance.now()));
      timer.unref();
      changeTimers.set(reason, timer);
    },
    ready() {
      subscribing ??= pubsub.subscribe(LIVE_CHANNEL, onMessage).then(
        (remove) => {
          unsubscribe = remove;
        },
        (err: unknown) => {
          // The streams still get this instance's events; the next stream tries again.
          subscribing = null;
          failed('subscribing')(err);
        },
      );
      return subscribing;
    },
    listen(send) {
      listeners.add(send);
      return () => {
        listeners.delete(send);
      };
    },
    get streams() {
      return listeners.size;
    },
  };

  return {
    live,
    async close() {
      if (closed) return;
      closed = true;
      // What was signed up or changed just before the shutdown still reaches the other instances.
      const pending: Array<Promise<unknown>> = [];
      if (signupTimer) {
        clearTimeout(signupTimer);
        pending.push(flushSignups());
      }
      for (const [reason, timer] of changeTimers) {
        clearTimeout(timer);
        pending.push(flushChange(reason));
      }
      await Promise.all(pending);
      listeners.clear();
      await reading;
      await subscribing;
      await unsubscribe?.().catch(() => undefined);
    },
  };
}

/**
 * Decorates `app.liveWaitlist` (app.pubsub must exist). Registered on the root instance before the
 * waitlist plugins, whose routes report to it; its onClose runs before app.pubsub's.
 */
export function registerLiveWaitlist(app: FastifyInstance): void {
  const { live, close } = createLiveWaitlist({ db: app.database.db, pubsub: app.pubsub, log: app.log });
  app.decorate('liveWaitlist', live);
  app.addHook('onClose', close);
}
