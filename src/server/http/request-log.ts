import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

/**
 * One log line per request, written when the response has gone out: the request (method, URL with
 * link tokens redacted, client address: the `req` serializer of app.ts), its route, the status and
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
