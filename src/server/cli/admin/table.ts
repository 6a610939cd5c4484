/** A plain-text table: a header, a rule, and the rows, in columns as wide as their widest cell. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** An ISO timestamp to the second, or "never". */
export function shortTime(iso: string | null): string {
  return iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : 'never';
}
