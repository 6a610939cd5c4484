import { describe, expect, it } from 'vitest';
import { prng } from '../../scripts/bench/lib/admin-data.js';
import { CreatedAtReader, isoTime } from '../../src/server/waitlist/export-sqlite.js';

/**
 * The SQLite export reads created_at once per hour (CreatedAtReader): each row must get exactly the
 * milliseconds isoTime gives its text, and where the reader says two rows of one hour sort by their
 * milliseconds, that must be the order of their bytes (SQLite's TEXT order, which the batch's order
 * check stands for). Checked on long runs of rows as the export meets them, newest first, with texts
 * in every form Date.parse reads its own way mixed in.
 */

const two = (n: number) => String(n).padStart(2, '0');

/** Texts a row may hold at `ms` besides its canonical ISO form. */
function oddForms(ms: number, pick: () => number): string[] {
  const iso = new Date(ms).toISOString();
  const [day, time] = iso.split('T') as [string, string];
  return [
    iso.slice(0, 19) + 'Z', // no milliseconds
    iso.slice(0, 21) + 'Z', // one digit of them
    `${iso.slice(0, 23)}+00:00`,
    `${day}T24:00:00.000Z`, // the next day's midnight
    `${day}T${time.slice(0, 3)}60:00.000Z`, // minute 60: not a time
    `${day}T${time.slice(0, 6)}60.000Z`, // a leap second
    `${day.slice(0, 8)}30T${time}`, // a 30th, in February the 2nd of March
    `${day.slice(0, 8)}31T${time}`,
    `${day.slice(0, 8)}00T${time}`,
    `${day.slice(0, 5)}13-01T${time}`,
    `00${two(Math.floor(pick() * 100))}-06-15T${time}`, // a year below 100
    `${day} ${time}`, // a space for the T
    `${day}T${time.slice(0, 2)}x${time.slice(3)}`,
    iso.toLowerCase(),
    `+${iso}`,
    '',
    'not a time',
  ];
}

/** Reads texts one after another as the export does, checking each against isoTime and each order the reader vouches for against the bytes. */
function readAll(texts: Iterable<string>, pick: () => number = () => 0): { byMilliseconds: number } {
  const reader = new CreatedAtReader();
  let previous: Buffer | null = null;
  let previousMs = Number.NaN;
  let byMilliseconds = 0;
  for (const text of texts) {
    // Cells sit anywhere in a batch's buffer.
    const pad = Math.floor(pick() * 4);
    const buf = Buffer.concat([Buffer.alloc(pad, 0x1f), Buffer.from(text), Buffer.alloc(2, 0x1e)]);
    const end = pad + Buffer.byteLength(text);
    const got = reader.read(buf, pad, end);
    const expected = isoTime(buf, pad, end);
    if (!Object.is(got, expected)) expect({ text, got }).toEqual({ text, got: expected });
    if (reader.sameHourAsPrevious) {
      byMilliseconds++;
      const bytes = Math.sign(previous!.compare(buf.subarray(pad, end)));
      const byMs = Math.sign(previousMs - got);
      if (byMs !== bytes) expect({ previous: previous!.toString(), text, byMs }).toEqual({ previous: previous!.toString(), text, byMs: bytes });
    }
    previous = Buffer.from(text);
    previousMs = got;
  }
  return { byMilliseconds };
}

describe('created_at read once per hour (SQLite export)', () => {
  it.each([
    ['hour 24 (only its first instant is a time)', ['2026-01-31T24:00:00.000Z', '2026-01-31T24:30:00.000Z', '2026-01-31T24:00:00.001Z']],
    ['hour 24 after a space', ['2026-01-31 24:00:00.000Z', '2026-01-31 24:30:00.000Z']],
    ['a space for the T, then the T', ['2026-01-31 23:30:00.000Z', '2026-01-31 23:10:00.000Z', '2026-01-31T23:05:00.000Z', '2026-01-31T23:04:00.000Z']],
    ['a year below 100', ['0026-01-31T23:30:00.000Z', '0026-01-31T23:10:00.000Z']],
    ['a 30th of February, then the 1st of March', ['2026-02-30T10:05:00.000Z', '2026-02-30T10:00:00.000Z', '2026-03-01T10:00:00.000Z', '2026-03-01T09:59:59.999Z']],
    ['text after the Z', ['2026-01-31T23:30:00.000Z', '2026-01-31T23:10:00.000Zx', '2026-01-31T23:10:00.000Z ', '2026-01-31T23:09:00.000Z']],
    ['a leap second and minute 60', ['2026-06-30T23:59:60.000Z', '2026-06-30T23:59:59.000Z', '2026-06-30T23:60:00.000Z', '2026-06-30T23:58:00.000Z']],
  ])('reads %s as isoTime does', (_name, texts) => {
    readAll(texts);
  });

  it('gives every row what isoTime gives it, and orders rows of one hour as their bytes', () => {
    const pick = prng(20261127);
    let ms = Date.UTC(2026, 11, 31, 23, 59, 59, 999);
    const texts: string[] = [];
    for (let i = 0; i < 200_000; i++) {
      // Mostly newest first, seconds to hours apart, with ties; now and then an odd text, or a jump.
      const step = pick();
      ms -= step < 0.1 ? 0 : step < 0.8 ? Math.floor(pick() * 60_000) : step < 0.99 ? Math.floor(pick() * 7_200_000) : Math.floor(pick() * 3e11);
      if (pick() < 0.9) {
        texts.push(new Date(ms).toISOString());
      } else {
        const forms = oddForms(ms, pick);
        texts.push(forms[Math.floor(pick() * forms.length)]!);
      }
      if (step >= 0.99 && pick() < 0.5) ms = Date.UTC(1900 + Math.floor(pick() * 200), 0, 1) + Math.floor(pick() * 3e10);
    }
    const { byMilliseconds } = readAll(texts, pick);
    // The runs did go through the per-hour path: most rows are canonical and share their hour with the row before.
    expect(byMilliseconds).toBeGreaterThan(100_000);
  });
});
