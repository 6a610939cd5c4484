import { memo, useEffect, useId, useMemo, useRef, useState } from 'react';
import { buttonStyles } from '../../ui/controls.js';
import { bucketLabel, chartSummary, formatCount, insightTexts, seriesFacts, type InsightBucket, type InsightPoint } from './insight-copy.js';
import type { createSignupChart, SignupChart } from './signup-chart.js';

type ChartModule = { createSignupChart: typeof createSignupChart };
let chartModule: Promise<ChartModule> | null = null;

/**
 * Starts fetching the chart's chunk (uPlot). The panel calls it on mount, so the chunk downloads
 * while the numbers are being counted instead of after they arrive. A failed fetch is tried again
 * on the next call.
 */
export function preloadChart(): Promise<ChartModule> {
  chartModule ??= import('./signup-chart.js').catch((error: unknown) => {
    chartModule = null;
    throw error;
  });
  return chartModule;
}

interface InsightChartProps {
  series: readonly InsightPoint[];
  bucket: InsightBucket;
}

/**
 * Signups per UTC day or week: a bar chart (uPlot, loaded on first use so that only the admin panel
 * fetches it) and its text alternative, a real table. The table is always in the accessibility
 * tree (visually hidden until "Show as table"); the chart is an image named by its summary.
 */
export const InsightChart = memo(function InsightChart({ series, bucket }: InsightChartProps) {
  const tableId = useId();
  const [tableShown, setTableShown] = useState(false);
  const [chartPhase, setChartPhase] = useState<'loading' | 'ready' | 'failed'>('loading');
  const hostRef = useRef<HTMLDivElement>(null);
  const readoutRef = useRef<HTMLParagraphElement>(null);
  const chartRef = useRef<SignupChart | null>(null);
  const summary = useMemo(() => chartSummary(series, bucket), [series, bucket]);
  /** The read-out's resting text: the summary without the title it sits under. */
  const facts = useMemo(() => seriesFacts(series, bucket) ?? summary, [series, bucket, summary]);
  const empty = series.length === 0;
  // What the chart is drawn with when its module arrives, and what the read-out falls back to.
  const latest = useRef({ series, bucket, facts });

  useEffect(() => {
    latest.current = { series, bucket, facts };
    chartRef.current?.setData(series, bucket);
    if (readoutRef.current) readoutRef.current.textContent = facts;
  }, [series, bucket, facts]);

  useEffect(() => {
    if (empty) return;
    let cancelled = false;
    let chart: SignupChart | null = null;
    preloadChart().then(
      ({ createSignupChart }) => {
        const host = hostRef.current;
        if (cancelled || !host) return;
        chart = createSignupChart(host, latest.current, {
          onHover: (text) => {
            // Straight to the DOM: a pointer moving over the chart re-renders nothing.
            if (readoutRef.current) readoutRef.current.textContent = text ?? latest.current.facts;
          },
        });
        chartRef.current = chart;
        setChartPhase('ready');
      },
      () => {
        if (!cancelled) setChartPhase('failed');
      },
    );
    return () => {
      cancelled = true;
      chart?.destroy();
      chartRef.current = null;
    };
  }, [empty]);

  const tableVisible = tableShown || chartPhase === 'failed';

  return (
    <div>
      <div className="flex flex-wrap items-center justify-between gap-x-4 gap-y-2">
        <h3 className="text-base font-semibold text-white">
          {insightTexts.chartTitle(bucket)}
        </h3>
        {!empty && chartPhase !== 'failed' && (
          <button
            type="button"
            className={buttonStyles.link}
            aria-expanded={tableShown}
            aria-controls={tableId}
            onClick={() => setTableShown((shown) => !shown)}
          >
            {tableShown ? insightTexts.hideTable : insightTexts.showTable}
          </button>
        )}
      </div>

      {empty ? (
        <p className="mt-4 rounded-xl border border-dashed border-white/10 py-10 text-center text-sm text-slate-400">{insightTexts.noSeries}</p>
      ) : (
        <>
          {/* Visible read-out of the hovered bucket (or the summary); the image's name says the same to assistive technology. */}
          <p ref={readoutRef} aria-hidden="true" className="mt-1 min-h-5 text-sm text-slate-400 tabular-nums" />
          {chartPhase === 'failed' ? (
            <p className="mt-3 text-sm text-slate-300">{insightTexts.chartFailed}</p>
          ) : (
            <div role="img" aria-label={summary} className="relative mt-3 h-[180px] min-[480px]:h-[240px]">
              {chartPhase === 'loading' && <div aria-hidden="true" className="absolute inset-0 animate-pulse rounded-xl bg-white/[0.04]" />}
              <div ref={hostRef} className="h-full w-full overflow-hidden" />
            </div>
          )}
          <SeriesTable id={tableId} series={series} bucket={bucket} visible={tableVisible} />
        </>
      )}
    </div>
  );
});

/** The chart's numbers as a table: visually hidden until asked for, always read by screen readers. */
function SeriesTable({ id, series, bucket, visible }: InsightChartProps & { id: string; visible: boolean }) {
  const caption = insightTexts.tableCaption(bucket);
  const table = (
    <table className="w-full border-separate border-spacing-0 text-left text-sm">
      <caption className={visible ? 'sr-only' : undefined}>{caption}</caption>
      <thead>
        <tr>
          <th scope="col" className={headerCell}>
            {insightTexts.tableColumns.bucket(bucket)}
          </th>
          <th scope="col" className={`${headerCell} text-right`}>
            {insightTexts.tableColumns.count}
          </th>
        </tr>
      </thead>
      <tbody>
        {series.map((point) => (
          <SeriesRow key={point.start} start={point.start} count={point.count} bucket={bucket} />
        ))}
      </tbody>
    </table>
  );
  if (!visible) {
    return (
      <div id={id} className="sr-only">
        {table}
      </div>
    );
  }
  // Scrollable, so it takes focus (keyboard users can scroll it) and is a named region.
  return (
    <div
      id={id}
      role="region"
      aria-label={caption}
      tabIndex={0}
      className="mt-4 max-h-80 overflow-auto overscroll-contain rounded-xl border border-white/10 bg-ink/40"
    >
      {table}
    </div>
  );
}

/**
 * One bucket's row. Memoised on its values: a live refresh changes the newest bucket or two, and
 * re-rendering hundreds of unchanged rows (a weekly series runs to 400+) would only cost time.
 */
const SeriesRow = memo(function SeriesRow({ start, count, bucket }: { start: string; count: number; bucket: InsightBucket }) {
  return (
    <tr>
      <th scope="row" className={`${bodyCell} font-normal text-slate-200`}>
        <time dateTime={start.slice(0, 10)}>{bucketLabel(start, bucket)}</time>
      </th>
      <td className={`${bodyCell} text-right text-slate-100 tabular-nums`}>{formatCount(count)}</td>
    </tr>
  );
});

const headerCell = 'sticky top-0 h-10 border-b border-white/10 bg-slate-900 px-3 text-xs font-semibold tracking-wide text-slate-300 uppercase';
const bodyCell = 'border-b border-white/5 px-3 py-2';
