/**
 * A latency histogram with logarithmic buckets 1% wide (1 µs to about 10 minutes in 2,000 counts),
 * so the generator never keeps one number per request and rounds merge by adding counts.
 */
const GROWTH = Math.log(1.01);
export const BUCKETS = 2000;

export function bucketOf(microseconds: number): number {
  if (microseconds <= 1) return 0;
  return Math.min(BUCKETS - 1, Math.floor(Math.log(microseconds) / GROWTH));
}

/** The middle of a bucket, in microseconds. */
function bucketValue(bucket: number): number {
  return Math.exp((bucket + 0.5) * GROWTH);
}

export function emptyHistogram(): number[] {
  return new Array<number>(BUCKETS).fill(0);
}

export function mergeHistograms(into: number[], from: readonly number[]): number[] {
  for (let i = 0; i < BUCKETS; i++) into[i] = (into[i] ?? 0) + (from[i] ?? 0);
  return into;
}

/** The latency at quantile `q` (0..1) in milliseconds, within 1%; NaN when empty. */
export function quantileMs(histogram: readonly number[], q: number): number {
  const total = histogram.reduce((a, b) => a + b, 0);
  if (total === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (let i = 0; i < BUCKETS; i++) {
    seen += histogram[i] ?? 0;
    if (seen >= rank) return bucketValue(i) / 1000;
  }
  return bucketValue(BUCKETS - 1) / 1000;
}
