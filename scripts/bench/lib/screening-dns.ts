/**
 * The DNS server of `npm run bench:signup -- --screening`: the tests' DNS server (dns2, UDP on
 * 127.0.0.1, a port of its own), answering every name with an MX, in the bench's own process (idle
 * while the load generator, a child process, runs). Its answer time is measured before the run
 * through node:dns, as the product's MX check asks it.
 */
import { Resolver } from 'node:dns/promises';
import { startDnsServer } from '../../../tests/support/dns.js';

export interface ScreeningDns {
  /** `127.0.0.1:<port>`, for DNS_SERVERS. */
  address: string;
  /** "answers in 0.12 ms median, 0.40 ms p99 (500 queries)". */
  latency: string;
  close(): Promise<void>;
}

export async function screeningDns(): Promise<ScreeningDns> {
  const server = await startDnsServer({}, { kind: 'mx', exchange: 'mx.example.com' });
  const resolver = new Resolver({ timeout: 1000, tries: 1 });
  resolver.setServers([server.address]);
  const times: number[] = [];
  for (let i = 0; i < 500; i++) {
    const start = performance.now();
    await resolver.resolveMx(`latency-${i}.example.com`);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(2);
  return {
    address: server.address,
    latency: `answers in ${at(0.5)} ms median, ${at(0.99)} ms p99 over ${times.length} queries`,
    close: () => server.close(),
  };
}
