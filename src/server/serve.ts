import { buildApp } from './app.js';
import { countAdmins } from './auth/admins.js';
import { CONFIG_ERROR_EXIT_CODE, loadConfigOrReport } from './config.js';
import { bufferedStdout } from './http/request-log.js';

async function main(): Promise<void> {
  const config = loadConfigOrReport((text) => process.stderr.write(text));
  if (!config) process.exit(CONFIG_ERROR_EXIT_CODE);

  // Log lines go out in blocks, not a system call each (http/request-log.ts).
  const app = await buildApp(config, { logger: { level: config.logLevel, stream: bufferedStdout() } });
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: finishing in-flight requests');
    const force = setTimeout(() => {
      app.log.error('shutdown took too long; exiting');
      process.exit(1);
    }, 15_000);
    force.unref();
    // A keep-alive connection whose request finishes during shutdown would otherwise hold close()
    // open until its idle timeout: close such connections as soon as they fall idle.
    const idleSweep = setInterval(() => app.server.closeIdleConnections(), 100);
    idleSweep.unref();
    app.close().then(
      () => {
        app.log.info('shutdown complete');
        process.exit(0);
      },
      (err: unknown) => {
        app.log.error({ err }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));

  await app.listen({ host: config.host, port: config.port });

  if ((await countAdmins(app.database.db)) === 0) {
    app.log.warn('no admin account exists yet: nobody can sign in to /admin');
    process.stderr.write('No admin account yet. Create one with: npm run admin -- create you@example.com\n');
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`Failed to start: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(1);
});
