import type { CompiledQuery } from 'kysely';
import type pg from 'pg';
import { optionalModule } from '../runtime/optional-module.js';

/** pg, loaded only when a PostgreSQL export writes its literals. */
const loadPg = optionalModule<typeof pg>('pg');

/**
 * A compiled PostgreSQL query with its parameters written into the text as literals, for the one
 * statement that takes none: COPY (SELECT …) TO STDOUT. Each bound value (string, number, boolean,
 * null, date) is written as the server would have read it, strings through pg's escapeLiteral, so
 * none can end its literal early; `$n` is replaced only outside quoted literals and identifiers.
 * Other types are refused: nothing needs one, and guessing a literal form is how injections start.
 */
export function inlinePostgresParameters(query: CompiledQuery): string {
  const { sql, parameters } = query;
  const literal = (index: number): string => {
    if (index < 1 || index > parameters.length) throw new Error(`the query refers to $${index}, which it does not bind`);
    const value = parameters[index - 1];
    if (value === null || value === undefined) return 'NULL';
    if (typeof value === 'string') return loadPg().escapeLiteral(value);
    if (typeof value === 'number' && Number.isFinite(value)) return String(value);
    if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
    if (typeof value === 'bigint') return value.toString();
    if (value instanceof Date && Number.isFinite(value.getTime())) return loadPg().escapeLiteral(value.toISOString());
    throw new Error(`cannot write parameter $${index} (${typeof value}) as a literal`);
  };
  // Left to right: a quoted literal or identifier (its quote escaped by doubling) is kept whole, a
  // quote that opens nothing is an error, and `$n` not inside a word is replaced.
  return sql.replace(/'(?:[^']|'')*'|"(?:[^"]|"")*"|(['"])|(?<![\w$])\$(\d+)/g, (match, open?: string, index?: string) => {
    if (open) throw new Error('the query has an unterminated quoted section');
    return index === undefined ? match : literal(Number(index));
  });
}
