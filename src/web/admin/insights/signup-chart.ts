/**
 * The signups chart, drawn by uPlot on a canvas. This module is loaded with a dynamic import from
 * InsightChart.tsx only, so uPlot (about 22 KB gzipped) and its stylesheet are a chunk of their own
 * that only the admin panel ever fetches. Nothing here is read by assistive technology: the chart's
 * summary is its container's accessible name and the numbers are in the table next to it.
 */
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { bucketTime, formatCount, pointText, shortDay, type InsightBucket, type InsightPoint } from './insight-copy.js';

export interface SignupChart {
  setData(series: readonly InsightPoint[], bucket: InsightBucket): void;
  destroy(): void;
}

export interface SignupChartOptions {
  /** The bucket under the pointer, worded; null when the pointer leaves the chart. */
  onHover: (text: string | null) => void;
}

const FONT = '12px ui-sans-serif, system-ui, sans-serif';
const AXIS_COLOR = '#94a3b8'; // slate-400, like the page's secondary text
const GRID_COLOR = 'rgba(255, 255, 255, 0.07)';
const BAR_FILL = 'rgba(52, 211, 153, 0.8)'; // emerald-400
const DAY_S = 86_400;

/** Y-axis steps: whole numbers only (1, 2, 5, 10, 20, 50…), there is no half a signup. */
const COUNT_STEPS = Array.from({ length: 10 }, (_, e) => [1, 2, 5].map((m) => m * 10 ** e)).flat();
/** X-axis label strides in buckets: days, a week, two, four…; weeks, a month, a quarter, a year… */
const DAY_STRIDES = [1, 2, 3, 7, 14, 28, 56, 91, 182, 364, 728];
const WEEK_STRIDES = [1, 2, 4, 8, 13, 26, 52, 104, 208, 520];

function chartHeight(width: number): number {
  return width < 480 ? 180 : 240;
}

export function createSignupChart(
  host: HTMLElement,
  initial: { series: readonly InsightPoint[]; bucket: InsightBucket },
  options: SignupChartOptions,
): SignupChart {
  let bucket: InsightBucket = 'day';
  let xs: number[] = [];
  let ys: number[] = [];
  let multiYear = false;

  /** Keeps the series for the axes and the hover read-out, and returns it in uPlot's shape. */
  const prepare = (series: readonly InsightPoint[], nextBucket: InsightBucket): uPlot.AlignedData => {
    bucket = nextBucket;
    xs = series.map((point) => bucketTime(point.start) / 1000);
    ys = series.map((point) => point.count);
    const first = xs[0];
    const last = xs[xs.length - 1];
    multiYear = first !== undefined && last !== undefined && new Date(first * 1000).getUTCFullYear() !== new Date(last * 1000).getUTCFullYear();
    return [xs, ys];
  };

  const bucketSeconds = () => (bucket === 'week' ? 7 * DAY_S : DAY_S);

  /** Labels on the buckets themselves, every n-th counted back from the newest, as many as fit. */
  const xSplits = (u: uPlot): number[] => {
    const n = xs.length;
    if (n === 0) return [];
    const plotWidth = u.bbox.width / uPlot.pxRatio;
    const fit = Math.max(1, Math.floor(plotWidth / (multiYear ? 96 : 64)));
    const strides = bucket === 'week' ? WEEK_STRIDES : DAY_STRIDES;
    // A round stride when one fits and still leaves two labels, else as many evenly spread as fit.
    const stride = strides.find((s) => s < n && Math.ceil(n / s) <= fit) ?? (n <= fit ? 1 : Math.ceil(n / fit));
    const splits: number[] = [];
    for (let i = (n - 1) % stride; i < n; i += stride) splits.push(xs[i] ?? 0);
    return splits;
  };

  const xValues = (_u: uPlot, splits: number[]): string[] =>
    splits.map((s) => (multiYear ? `${shortDay(s * 1000)} ${new Date(s * 1000).getUTCFullYear()}` : shortDay(s * 1000)));

  const yValues = (_u: uPlot, splits: number[]): string[] => splits.map((v) => (Number.isInteger(v) ? formatCount(v) : ''));

  // Hundreds of bars narrower than a few pixels cost a software-rendered canvas tens of
  // milliseconds to fill, one small rectangle each; drawn as one stepped outline they look the
  // same at that width and fill in one go.
  const bars = uPlot.paths.bars?.({ size: [0.8, 48, 1], align: 0 });
  const steps = uPlot.paths.stepped?.({ align: 1 });
  const dense = (u: uPlot) => xs.length > u.bbox.width / uPlot.pxRatio / 4;

  const width = Math.max(200, host.clientWidth);
  const opts: uPlot.Options = {
    width,
    height: chartHeight(width),
    legend: { show: false },
    // Room on the right for the newest bucket's label, which is centred on its bar.
    padding: [12, () => (multiYear ? 44 : 28), 0, 0],
    // Hover reads a bucket out; no drag-to-zoom (the date filters narrow the range).
    cursor: { drag: { x: false, y: false, setScale: false }, points: { show: false }, y: false },
    scales: {
      x: {
        time: false,
        // Half a bucket either side, so the first and last bars are whole (and one bar has a width).
        range: (_u, min, max) => [min - bucketSeconds() / 2, max + bucketSeconds() / 2],
      },
      y: { range: (_u, _min, max) => [0, Math.max(1, Math.ceil(max * 1.1))] },
    },
    axes: [
      {
        stroke: AXIS_COLOR,
        font: FONT,
        grid: { show: false },
        ticks: { stroke: GRID_COLOR, size: 4 },
        splits: xSplits,
        values: xValues,
        gap: 4,
        size: 28,
      },
      {
        stroke: AXIS_COLOR,
        font: FONT,
        grid: { stroke: GRID_COLOR, width: 1 },
        ticks: { show: false },
        incrs: COUNT_STEPS,
        values: yValues,
        gap: 6,
        // Wide enough for the longest count ("1,000,000" at 12px).
        size: (_u, values) => 14 + 7 * Math.max(1, ...(values ?? []).map((v) => v.length)),
      },
    ],
    series: [
      {},
      {
        label: 'Signups',
        fill: BAR_FILL,
        stroke: BAR_FILL,
        width: 0,
        points: { show: false },
        paths: (u, seriesIdx, idx0, idx1) => (dense(u) ? steps : bars)?.(u, seriesIdx, idx0, idx1) ?? null,
      },
    ],
    hooks: {
      setCursor: [
        (u) => {
          const i = u.cursor.idx;
          const x = i == null ? undefined : xs[i];
          const y = i == null ? undefined : ys[i];
          options.onHover(x === undefined || y === undefined ? null : pointText(x * 1000, y, bucket));
        },
      ],
    },
  };

  const plot = new uPlot(opts, prepare(initial.series, initial.bucket), host);
  // The canvas never takes focus or pointer text; the page's table carries the numbers.
  plot.root.setAttribute('aria-hidden', 'true');

  let lastWidth = width;
  const observer = new ResizeObserver(() => {
    const next = Math.max(200, host.clientWidth);
    if (next === lastWidth) return;
    lastWidth = next;
    plot.setSize({ width: next, height: chartHeight(next) });
  });
  observer.observe(host);

  return {
    setData(series, nextBucket) {
      plot.setData(prepare(series, nextBucket));
    },
    destroy() {
      observer.disconnect();
      plot.destroy();
    },
  };
}
