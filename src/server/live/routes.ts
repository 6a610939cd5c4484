import { PassThrough } from 'node:stream';
import type { FastifyPluginAsync } from 'fastify';
import { HttpError } from '../http/errors.js';
import { ADMIN_EVENTS_HEARTBEAT_MS, ADMIN_EVENTS_PATH } from '../../shared/admin/waitlist-api.js';
import { formatEvent } from './updates.js';

export interface AdminEventsOptions {
  /** How often a comment line keeps the stream (and every proxy on the way) from idling out; ADMIN_EVENTS_HEARTBEAT_MS. */
  heartbeatMs?: number;
  /** How often an open stream checks that its session still holds (signed out, revoked, timed out). */
  sessionCheckMs?: number;
}

/** Sign-out and revocation end a stream within this long (auth publishes no revocations to wait for). */
export const SESSION_CHECK_MS = 15_000;
/**
 * A client that reads slower than events come (more than this much unsent) is dropped: the page
 * reconnects and reloads, instead of the server buffering for it without bound.
 */
const MAX_BUFFERED_BYTES = 1024 * 1024;

const HEARTBEAT = ': keep-alive\n\n';

/**
 * `GET ADMIN_EVENTS_PATH`: the admin's live updates as server-sent events (contract in
 * src/shared/admin/waitlist-api.ts), guarded like every admin route. `ready` first, then the
 * events of app.liveWaitlist; the stream ends when the access token expires, when the session ends
 * (checked every SESSION_CHECK_MS, without counting as use, so an open page alone does not keep an
 * idle session alive), when the client goes, and when the server closes (preClose, so open streams
 * never hold a shutdown up).
 */
export const adminEventsRoutes: FastifyPluginAsync<AdminEventsOptions> = async (app, options) => {
  const heartbeatMs = options.heartbeatMs ?? ADMIN_EVENTS_HEARTBEAT_MS;
  const sessionCheckMs = options.sessionCheckMs ?? SESSION_CHECK_MS;
  app.guardAdminScope();

  const open = new Set<() => void>();
  app.addHook('preClose', async () => {
    for (const end of [...open]) end();
  });

  app.get(
    ADMIN_EVENTS_PATH,
    {
      config: { role: 'viewer' },
      // Never compressed (a compressor buffers), and no HEAD twin that would open a stream.
      compress: false,
      exposeHeadRoute: false,
    },
    async (request, reply) => {
      const session = await app.recheckAdmin(request);
      if (!session) throw new HttpError(401, 'unauthorized', 'This session has been signed out. Sign in again.');
      // Subscribed before `ready`: from `ready` on, every instance's events reach this stream.
      await app.liveWaitlist.ready();

      const stream = new PassThrough();
      let ended = false;
      let checking = false;
      const send = (text: string) => {
        if (ended) return;
        if (stream.readableLength > MAX_BUFFERED_BYTES) {
          request.log.warn('admin events: client too slow; stream closed');
          end();
          return;
        }
        stream.write(text);
      };
      const recheck = () => {
        if (checking || ended) return;
        checking = true;
        app.recheckAdmin(request).then(
          (still) => {
            checking = false;
            if (!still) end();
          },
          (err: unknown) => {
            // Fail closed: the page reconnects, and its next request meets the same checks.
            checking = false;
            request.log.error({ err }, 'admin events: session check failed; stream closed');
            end();
          },
        );
      };

      stream.write(formatEvent({ type: 'ready', data: { asOf: new Date().toISOString() } }));
      const unlisten = app.liveWaitlist.listen(send);
      const heartbeat = setInterval(() => send(HEARTBEAT), heartbeatMs);
      const sessionCheck = setInterval(recheck, sessionCheckMs);
      // exp is at most JWT_EXPIRY_SECONDS (a week) away, within setTimeout's range.
      const expiry = setTimeout(() => end(), Math.max(0, session.expiresAtMs - Date.now()));
      function end(): void {
        if (ended) return;
        ended = true;
        clearInterval(heartbeat);
        clearInterval(sessionCheck);
        clearTimeout(expiry);
        unlisten();
        open.delete(end);
        stream.end();
      }
      open.add(end);
      // The client went away (or the response finished): stop at once.
      reply.raw.on('close', end);

      return reply
        .header('content-type', 'text/event-stream; charset=utf-8')
        .header('cache-control', 'no-store')
        // nginx (and proxies that honour it) pass the events on as they come, unbuffered.
        .header('x-accel-buffering', 'no')
        .send(stream);
    },
  );
};
