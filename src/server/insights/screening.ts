import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { WaitlistFilter } from '../../shared/admin/waitlist-filter.js';
import { SCREENING_REASONS, type ScreeningCounts } from '../../shared/waitlist/screening.js';

const HOURS_PER_DAY = 24;
const dayHour = (day: string) => (Date.parse(`${day}T00:00:00.000Z`) / 86_400_000) * HOURS_PER_DAY;

/**
 * Held and refused signups by reason in the panel's period (the filter's `from`/`to` UTC days; all
 * time without them), from signup_screening (one row per hour and reason: a year is under 40,000
 * rows, whatever the size of the list). Every reason, zeros included. The other filters do not
 * apply: a refused signup is not an entry.
 */
export async function screeningCounts(db: Kysely<Database>, filter: Pick<WaitlistFilter, 'from' | 'to'>): Promise<ScreeningCounts> {
  let query = db.selectFrom('signup_screening').select(['reason', (eb) => eb.fn.sum<string | number>('n').as('n')]).groupBy('reason');
  if (filter.from) query = query.where('hour', '>=', dayHour(filter.from));
  if (filter.to) query = query.where('hour', '<', dayHour(filter.to) + HOURS_PER_DAY);
  const counts = new Map((await query.execute()).map((row) => [row.reason, Number(row.n)]));
  return SCREENING_REASONS.map((reason) => ({ reason, count: counts.get(reason) ?? 0 }));
}
