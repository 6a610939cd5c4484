import type { AddressInfo } from 'node:net';
import dns2 from 'dns2';

const { Packet } = dns2;

/**
 * What the test DNS server answers for a name (to its MX question; an A question gets the A record
 * of an `a-only` name, nothing otherwise). `delayMs` holds the answer back that long (a slow server).
 */
export type TestZone = (
  | { kind: 'mx'; exchange: string }
  /** `MX 0 .` (RFC 7505): the domain says it receives no mail. */
  | { kind: 'null-mx' }
  /** No MX, an A record: the MX question's answer is empty, NOERROR. */
  | { kind: 'a-only'; address: string }
  | { kind: 'nxdomain' }
  /** Never answered (a resolver's timeout). */
  | { kind: 'silent' }
  | { kind: 'servfail' }
) & { delayMs?: number };

export interface TestDnsServer {
  /** `127.0.0.1:<port>`, as DNS_SERVERS takes it. */
  address: string;
  /** MX questions asked, per name (what a cache saves). */
  queries: Map<string, number>;
  /** The table it answers from; tests change it as they go. */
  zones: Map<string, TestZone>;
  close(): Promise<void>;
}

/**
 * A real DNS server on 127.0.0.1 (UDP, a port the kernel chooses), answering from a table of names;
 * a name not in it gets `fallback` (NXDOMAIN by default).
 */
export async function startDnsServer(zones: Record<string, TestZone>, fallback: TestZone = { kind: 'nxdomain' }): Promise<TestDnsServer> {
  const table = new Map(Object.entries(zones));
  const queries = new Map<string, number>();
  const server = dns2.createUDPServer((request, send) => {
    const [question] = request.questions;
    if (!question) return;
    const name = question.name.toLowerCase();
    if (question.type === Packet.TYPE.MX) queries.set(name, (queries.get(name) ?? 0) + 1);
    const zone = table.get(name) ?? fallback;
    if (zone.kind === 'silent') return;
    const response = Packet.createResponseFromRequest(request);
    // @types/dns2 types an answer as a Resource instance; the encoder takes plain records.
    const answer = (record: Record<string, unknown>) => response.answers.push(record as never);
    const record = { name: question.name, class: Packet.CLASS.IN, ttl: 300 };
    if (zone.kind === 'nxdomain') response.header.rcode = Packet.RCODE.NXDOMAIN;
    else if (zone.kind === 'servfail') response.header.rcode = Packet.RCODE.SERVFAIL;
    else if (question.type === Packet.TYPE.MX && zone.kind === 'mx') answer({ ...record, type: Packet.TYPE.MX, exchange: zone.exchange, priority: 10 });
    else if (question.type === Packet.TYPE.MX && zone.kind === 'null-mx') answer({ ...record, type: Packet.TYPE.MX, exchange: '', priority: 0 });
    else if (question.type === Packet.TYPE.A && zone.kind === 'a-only') answer({ ...record, type: Packet.TYPE.A, address: zone.address });
    if (zone.delayMs) setTimeout(() => send(response), zone.delayMs);
    else send(response);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.bind(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    queries,
    zones: table,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
