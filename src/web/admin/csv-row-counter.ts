/**
 * Counts the data rows of a CSV file while its bytes arrive, chunk by chunk, with the rules of
 * src/shared/csv.ts countCsvRows (header not counted, blank lines not counted, a line break inside a
 * quoted cell is not a row). It looks at bytes, not text: CR, LF, the quote, space and tab are single
 * bytes in UTF-8 and never part of a multi-byte character, so a chunk may end anywhere (inside a
 * character, between the CR and LF of a line end, between the two quotes of an escaped quote) and the
 * count is the same as for the whole text. The export page uses it so a 90 MB file is never decoded
 * and scanned in one long task.
 */
export interface CsvRowCounter {
  /** Feeds the next bytes of the file. */
  push(chunk: Uint8Array): void;
  /** The data rows so far (the last line counts even without a final line break). */
  rows(): number;
}

const QUOTE = 0x22;
const CR = 0x0d;
const LF = 0x0a;
const SPACE = 0x20;
const TAB = 0x09;
/** The UTF-8 byte-order mark, which a blank first line may start with. */
const BOM = [0xef, 0xbb, 0xbf] as const;

/**
 * What a byte outside quotes means to the count: 0 nothing (it is content unless blank), else one
 * of the marks below. The scan skips runs of 0 in a tight loop, so a row of ordinary cells costs a
 * few comparisons per byte and one step per line end or quote.
 */
const PLAIN = 0;
const IS_LF = 1;
const IS_CR = 2;
const IS_QUOTE = 3;
const MARKS = new Uint8Array(256);
MARKS[LF] = IS_LF;
MARKS[CR] = IS_CR;
MARKS[QUOTE] = IS_QUOTE;

export function createCsvRowCounter(): CsvRowCounter {
  let records = 0;
  let inQuotes = false;
  /** The current record has something besides blanks (a blank line is not a row). */
  let content = false;
  /** The last byte was a CR outside quotes: an LF right after it ends nothing more. */
  let afterCr = false;
  let offset = 0;

  return {
    push(chunk) {
      const length = chunk.length;
      let i = 0;
      while (i < length) {
        if (inQuotes) {
          // `""` inside a quoted cell closes and reopens it: the state comes out the same.
          while (i < length && chunk[i] !== QUOTE) i++;
          if (i === length) break;
          inQuotes = false;
          i++;
          continue;
        }
        // A run of plain bytes: the record has content unless they are all blanks (or the BOM).
        let byte = chunk[i]!;
        let mark = MARKS[byte]!;
        if (mark === PLAIN) {
          afterCr = false;
          do {
            if (!content && byte !== SPACE && byte !== TAB && !(offset + i < BOM.length && byte === BOM[offset + i])) content = true;
            if (++i === length) break;
            byte = chunk[i]!;
          } while ((mark = MARKS[byte]!) === PLAIN);
          if (i === length) break;
        }
        i++;
        if (mark === IS_LF) {
          if (!afterCr) {
            if (content) records++;
            content = false;
          }
          afterCr = false;
        } else if (mark === IS_CR) {
          if (content) records++;
          content = false;
          afterCr = true;
        } else {
          inQuotes = true;
          content = true;
          afterCr = false;
        }
      }
      offset += length;
    },
    rows() {
      return Math.max(0, records + (content ? 1 : 0) - 1);
    },
  };
}
