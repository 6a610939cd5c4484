import { BYTE_CLASS, CELL, CELLS, type FramedBatch } from './export-bytes.js';

/**
 * The batches a SQLite export reads (admin-repository.ts sqliteExportBatchQuery): each row's six
 * cells (CELL) and the first SQLITE_EXPORT_ID_PREFIX characters of its id, joined by
 * SQLITE_EXPORT_CELL_SEPARATOR, the rows joined by SQLITE_EXPORT_ROW_SEPARATOR. Both are control
 * characters, which no plain cell has; a value holding one makes its batch not split as its count
 * says, and frameBatch then refuses it.
 */
export const SQLITE_EXPORT_CELL_SEPARATOR = 0x1f;
export const SQLITE_EXPORT_ROW_SEPARATOR = 0x1e;
export const SQLITE_EXPORT_ID_PREFIX = 8;
/** Cells per row in a batch: the six, then the id's start. */
export const SQLITE_EXPORT_FRAME = CELLS + 1;

/**
 * The cells of a batch of `n` rows (with cellBytes of each, worked out in the same pass), or null
 * when it does not split into n rows of SQLITE_EXPORT_FRAME cells, or (`checkOrder`) when its rows
 * are not in the list's order: created_at descending, then the id's start descending (equal starts
 * cannot be told apart, so they fail the check too).
 */
export function frameBatch(cells: Buffer, n: number, checkOrder: boolean): FramedBatch | null {
  const frame = SQLITE_EXPORT_FRAME;
  const bounds = new Int32Array(n * frame + 1);
  const classes = new Int32Array(n * frame);
  let cell = 0;
  let bytes = 0;
  for (let i = 0; i < cells.length; i++) {
    const b = cells[i]!;
    if (b === SQLITE_EXPORT_CELL_SEPARATOR) {
      classes[cell] = bytes;
      bytes = 0;
      if (++cell % frame === 0 || cell >= n * frame) return null;
      bounds[cell] = i + 1;
    } else if (b === SQLITE_EXPORT_ROW_SEPARATOR) {
      classes[cell] = bytes;
      bytes = 0;
      if (++cell % frame !== 0 || cell >= n * frame) return null;
      bounds[cell] = i + 1;
    } else {
      bytes |= BYTE_CLASS[b]!;
    }
  }
  if (cell !== n * frame - 1) return null;
  classes[cell] = bytes;
  bounds[n * frame] = cells.length + 1;
  if (checkOrder) {
    // Positive when row r - 1's cell sorts after row r's (text compares as bytes, as SQLite's BINARY collation does).
    const compare = (r: number, c: number) => {
      const previous = (r - 1) * frame + c;
      const current = r * frame + c;
      return -cells.compare(cells, bounds[previous]!, bounds[previous + 1]! - 1, bounds[current]!, bounds[current + 1]! - 1);
    };
    for (let r = 1; r < n; r++) {
      const byTime = compare(r, CELL.createdAt);
      if (byTime < 0 || (byTime === 0 && compare(r, CELLS) <= 0)) return null;
    }
  }
  return { cells, n, frame, bounds, classes };
}
