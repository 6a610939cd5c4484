import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * A CommonJS package loaded on first use instead of at start-up: for the clients only some
 * configurations need (pg on PostgreSQL, ioredis with REDIS_URL, nodemailer with SMTP_URL, qrcode
 * for a TOTP enrolment), so a server that does not use one never holds its code in memory.
 *
 *   const pg = optionalModule<typeof import('pg')>('pg');
 *   new (pg().Pool)(...)
 */
export function optionalModule<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= require(name) as T);
}
