import type { Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
// Held and refused signups, counted per UTC hour and reason (issue 28, point 5; decision 052): one
// row per hour and reason, upserted by the signup room (signup/screening-counter.ts), read by the
// insight panel for its period. `hour` is hours since 1970-01-01T00:00Z, an integer on both
// databases, so a period compares the same way on each.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('signup_screening')
    .addColumn('hour', 'integer', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('n', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('signup_screening_pkey', ['hour', 'reason'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('signup_screening').ifExists().execute();
}
