import { afterEach, describe, expect, it } from 'vitest';
import { run } from '../../../src/server/cli/mail.js';
import { runCliInProcess } from '../../support/server-process.js';
import { startSmtpServer, unusedPort, type TestSmtpServer } from '../../support/smtp.js';

const servers: TestSmtpServer[] = [];
afterEach(async () => {
  while (servers.length) await servers.pop()!.close();
});

const mailEnv = (smtpUrl: string) => ({
  SMTP_URL: smtpUrl,
  MAIL_FROM: 'Product <hello@example.com>',
  PUBLIC_URL: 'https://waitlist.example.com',
  LOG_LEVEL: 'silent',
});

describe('npm run mail -- test', () => {
  it("sends a test message straight through SMTP and prints the server's answer", async () => {
    const server = await startSmtpServer();
    servers.push(server);
    const result = await runCliInProcess(run, ['test', 'You@Example.com'], { env: mailEnv(server.url) });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Server answered: 250 /m);
    expect(result.stdout).toMatch(/^Accepted: you@example\.com$/m);
    expect(result.stdout).toMatch(/^Rejected: \(none\)$/m);
    expect(result.stdout).toMatch(/^Message-ID: <[0-9a-f-]{36}@waitlist\.example\.com>$/m);
    expect(server.messages).toHaveLength(1);
    expect(server.messages[0]!.to).toEqual(['you@example.com']);
    expect(server.messages[0]!.header('subject')).toBe('Test message');
  });

  it('reports a refusal, an unreachable server and e-mail being off, with a non-zero exit code', async () => {
    const refusing = await startSmtpServer({ answer: () => ({ code: 550, message: 'Mailbox unavailable' }) });
    servers.push(refusing);
    const refused = await runCliInProcess(run, ['test', 'you@example.com'], { env: mailEnv(refusing.url) });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/Error: Could not send through 127\.0\.0\.1:\d+: .*550.*Mailbox unavailable/);

    const down = await runCliInProcess(run, ['test', 'you@example.com'], { env: mailEnv(`smtp://127.0.0.1:${await unusedPort()}`) });
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/Could not send through .*ECONNREFUSED/);

    const off = await runCliInProcess(run, ['test', 'you@example.com'], { env: { LOG_LEVEL: 'silent' } });
    expect(off.code).toBe(1);
    expect(off.stderr).toMatch(/E-mail is off: SMTP_URL is not set/);

    const badConfig = await runCliInProcess(run, ['test', 'you@example.com'], { env: { SMTP_URL: 'smtp://127.0.0.1:25' } });
    expect(badConfig.code).toBe(78);
    expect(badConfig.stderr).toMatch(/MAIL_FROM: required when SMTP_URL is set/);

    const usage = await runCliInProcess(run, ['test'], { env: {} });
    expect(usage.code).toBe(2);
  });
});
