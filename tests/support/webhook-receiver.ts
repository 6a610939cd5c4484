import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/**
 * A real HTTP receiver for webhook tests, on 127.0.0.1 and port 0: it records every request (headers
 * and raw body) and answers as `answer` says for the n-th request (0-based): a status with headers,
 * or `hang` (never answers; the connection is closed when the receiver is).
 */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

export type ReceiverAnswer = { status: number; headers?: Record<string, string> } | 'hang';

export interface WebhookReceiver {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** Changes the answers from now on. */
  answerWith(answer: (index: number, request: ReceivedRequest) => ReceiverAnswer): void;
  close(): Promise<void>;
}

export async function startWebhookReceiver(answer: (index: number, request: ReceivedRequest) => ReceiverAnswer = () => ({ status: 204 })): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  let answerOf = answer;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers[name] = value;
      const received = { method: req.method ?? '', path: req.url ?? '', headers, body: Buffer.concat(chunks).toString('utf8') };
      const index = requests.push(received) - 1;
      const reply = answerOf(index, received);
      if (reply === 'hang') return;
      res.writeHead(reply.status, reply.headers ?? {});
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    requests,
    answerWith(next) {
      answerOf = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The request's body, verified with `secret` by the official `standardwebhooks` package (throws when it does not verify). */
export function verifiedPayload(secret: string, request: ReceivedRequest): { type: string; timestamp: string; data: Record<string, unknown> } {
  return new Webhook(secret).verify(request.body, request.headers) as { type: string; timestamp: string; data: Record<string, unknown> };
}
