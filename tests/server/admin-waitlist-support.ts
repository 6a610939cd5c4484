import pg from 'pg';

/**
 * Opt-in PostgreSQL runs for the admin waitlist tests: with TEST_POSTGRES_URL set (a role that
 * may create databases), each test file gets its own database `<name>_<suffix>`, so files running
 * in parallel never share tables. Returns undefined when the variable is not set.
 */
export async function scratchPostgresDatabase(suffix: string): Promise<string | undefined> {
  const baseUrl = process.env.TEST_POSTGRES_URL;
  if (!baseUrl) return undefined;
  const url = new URL(baseUrl);
  const name = `${url.pathname.slice(1) || 'postgres'}_${suffix}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0) await admin.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
  } finally {
    await admin.end();
  }
  url.pathname = `/${name}`;
  return url.toString();
}

/** Drops and recreates the public schema: every table, migrations included, starts from nothing. */
export async function resetPostgresSchema(connectionString: string): Promise<void> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await client.query('DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public');
  } finally {
    await client.end();
  }
}
