import type { CompiledQuery } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { inlinePostgresParameters } from '../../../src/server/export/postgres-literals.js';
import { itWhen } from '../../support/databases.js';

const compiled = (sql: string, parameters: unknown[]): CompiledQuery => ({ sql, parameters, query: { kind: 'RawNode' } as never, queryId: { queryId: 'test' } });

/** Values an attacker might choose for a filter: every way out of a literal that has worked somewhere. */
const HOSTILE = ["'", "''", "\\'", "\\", "'; DROP TABLE waitlist; --", '$1', '$$', "a;b", 'Ünïcödé', "E'\\x41'", '"', '\n\r\t'];

describe('inlinePostgresParameters', () => {
  it('writes each kind of value where its placeholder was, leaving quoted text alone', () => {
    const text = inlinePostgresParameters(
      compiled(`select $1, $2, $3, $4, '$1 stays', "col$2", x LIKE $5 ESCAPE '\\', $6, $10`, [
        "it's",
        42,
        true,
        null,
        '%a\\_b%',
        new Date('2026-11-25T12:00:00.000Z'),
        0,
        0,
        0,
        -1.5,
      ]),
    );
    expect(text).toBe(
      `select 'it''s', 42, TRUE, NULL, '$1 stays', "col$2", x LIKE  E'%a\\\\_b%' ESCAPE '\\', '2026-11-25T12:00:00.000Z', -1.5`,
    );
  });

  it('refuses what it cannot write safely', () => {
    expect(() => inlinePostgresParameters(compiled('select $1', [['a']]))).toThrow(/literal/);
    expect(() => inlinePostgresParameters(compiled('select $1', [{ a: 1 }]))).toThrow(/literal/);
    expect(() => inlinePostgresParameters(compiled('select $1', [Number.NaN]))).toThrow(/literal/);
    expect(() => inlinePostgresParameters(compiled('select $2', ['a']))).toThrow(/does not bind/);
    expect(() => inlinePostgresParameters(compiled("select 'open", []))).toThrow(/unterminated/);
  });

  itWhen(Boolean(process.env.TEST_DATABASE_URL))('reads back on PostgreSQL as exactly the values bound', async () => {
    const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await client.connect();
    try {
      for (const value of HOSTILE) {
        const { rows } = await client.query<{ v: string }>(inlinePostgresParameters(compiled('SELECT $1::text AS v', [value])));
        expect(rows, JSON.stringify(value)).toEqual([{ v: value }]);
      }
    } finally {
      await client.end();
    }
  });
});
