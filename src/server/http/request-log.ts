import { LogController, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import pino from 'pino';
import { SEARCH_PARAM } from '../../shared/admin/waitlist-filter.js';
import { LINK_TOKEN_PARAM } from '../../shared/waitlist/consent-contract.js';

/**
 * Query parameters a logged URL never shows: an e-mail link's token (a credential), and the admin's
 * search (`q`: usually an address or part of one, personal data; security review, finding 5).
 */
const REDACTED_PARAMS = [LINK_TOKEN_PARAM, SEARCH_PARAM];
const REDACTED_IN_QUERY = new RegExp(`([?&](?:${REDACTED_PARAMS.join('|')})=)[^&#]*`, 'gi');

/** A request URL as the logs show it: REDACTED_PARAMS' values replaced by `[redacted]`. */
export function redactUrl(url: string): string {
  return url.replace(REDACTED_IN_QUERY, '$1[redacted]');
}

/**
 * The app's logger options with Fastify's request serializer showing the URL redacted (redactUrl).
 * Other fields are Fastify's defaults; a logger given as `false` stays off.
 */
export function withRedactedUrls(logger: FastifyServerOptions['logger']): FastifyServerOptions['logger'] {
  if (typeof logger !== 'object' || logger === null) return logger;
  return {
    ...logger,
    serializers: {
      ...logger.serializers,
      req: (request: FastifyRequest) => ({
        method: request.method,
        url: redactUrl(request.url),
        version: typeof request.headers['accept-version'] === 'string' ? request.headers['accept-version'] : undefined,
        host: request.host,
        remoteAddress: request.ip,
        remotePort: request.socket?.remotePort,
      }),
    },
  };
}

/**
 * One log line per request, written when the response has gone out: the request (method, URL with
 * link tokens and searches redacted, client address: withRedactedUrls), its route, the status and
 * the time taken. Fastify's default writes two lines per request (`incoming request` and `request
 * completed`), and a logger write is a system call; the incoming line is kept at debug level, for
 * following a request that never completes.
 */
export class OneLinePerRequest extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const line = { req: request, route: request.routeOptions.url, res: reply, responseTime: reply.elapsedTime };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.info(line, 'request completed');
  }
}

/** Log output is written when this much has gathered (bytes)... */
export const LOG_BLOCK_BYTES = 4096;
/** ...or this long after the last write (ms), whichever comes first. */
export const LOG_FLUSH_MS = 100;

/**
 * The production server's log destination (serve.ts): standard output, written in blocks of about
 * LOG_BLOCK_BYTES (some 15 request lines) or every LOG_FLUSH_MS, instead of a write(2) per line
 * (issue 33: at 1,000 signups/s, a thousand system calls a second for the request log alone).
 * Whatever is pending is written when the process exits (process.exit included); a SIGKILL loses at
 * most the last LOG_FLUSH_MS of lines. The signups themselves never depend on the log.
 */
export function bufferedStdout(): pino.DestinationStream {
  const stream = pino.destination({ dest: 1, sync: true, minLength: LOG_BLOCK_BYTES, periodicFlush: LOG_FLUSH_MS });
  process.on('exit', () => {
    try {
      stream.flushSync();
    } catch {
      // Standard output is gone: nothing more can be logged.
    }
  });
  return stream;
}
