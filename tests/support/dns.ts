import type { AddressInfo } from 'node:net';
import dns2 from 'dns2';

const { Packet } = dns2;

/**
 * A real DNS server on 127.0.0.1 (UDP, a port the kernel chooses), answering from a table of zones:
 * each name has what its MX query returns. Queries for names it does not know get NXDOMAIN;
 * `silent` names are never answered (a resolver's timeout). `queries` counts the MX questions asked,
 * per name (what a cache saves).
 */
export type TestZone =
  | { kind: 'mx'; exchange: string }
  /** `MX 0 .` (RFC 7505): the domain says it receives no mail. */
  | { kind: 'null-mx' }
  /** No MX, an A record (the MX query's answer is empty, NOERROR). */
  | { kind: 'a-only'; address: string }
  | { kind: 'silent' }
  | { kind: 'servfail' };

export interface TestDnsServer {
  /** `127.0.0.1:<port>`, as DNS_SERVERS takes it. */
  address: string;
  queries: Map<string, number>;
  zones: Map<string, TestZone>;
  close(): Promise<void>;
}

export async function startDnsServer(zones: Record<string, TestZone>): Promise<TestDnsServer> {
  const table = new Map(Object.entries(zones));
  const queries = new Map<string, number>();
  const server = dns2.createUDPServer((request, send) => {
    const [question] = request.questions;
    if (!question) return;
    const name = question.name.toLowerCase();
    if (question.type === Packet.TYPE.MX) queries.set(name, (queries.get(name) ?? 0) + 1);
    const zone = table.get(name);
    if (zone?.kind === 'silent') return;
    const response = Packet.createResponseFromRequest(request);
    // @types/dns2 types an answer as a Resource instance; the encoder takes plain records.
    const answer = (record: Record<string, unknown>) => response.answers.push(record as never);
    if (!zone) {
      response.header.rcode = Packet.RCODE.NXDOMAIN;
    } else if (zone.kind === 'servfail') {
      response.header.rcode = Packet.RCODE.SERVFAIL;
    } else if (question.type === Packet.TYPE.MX && zone.kind === 'mx') {
      answer({ name, type: Packet.TYPE.MX, class: Packet.CLASS.IN, ttl: 300, exchange: zone.exchange, priority: 10 });
    } else if (question.type === Packet.TYPE.MX && zone.kind === 'null-mx') {
      answer({ name, type: Packet.TYPE.MX, class: Packet.CLASS.IN, ttl: 300, exchange: '', priority: 0 });
    } else if (question.type === Packet.TYPE.A && zone.kind === 'a-only') {
      answer({ name, type: Packet.TYPE.A, class: Packet.CLASS.IN, ttl: 300, address: zone.address });
    }
    send(response);
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
