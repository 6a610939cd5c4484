import { useCallback, useEffect, useId, type ReactNode } from 'react';
import type { InsightsTopList, WaitlistInsights } from '../../../shared/admin/waitlist-api.js';
import { isEmptyFilter, NONE_VALUE, type WaitlistFilter } from '../../../shared/admin/waitlist-filter.js';
import { ENTRY_STATUSES, type EntryStatus } from '../../../shared/waitlist/entry.js';
import { buttonStyles, SpinnerIcon } from '../../ui/controls.js';
import { cardStyles } from '../../ui/styles.js';
import { CardLoadFailed } from '../common/CardStatus.js';
import { InsightChart, preloadChart } from './InsightChart.js';
import { formatCount, insightTexts, percentText, shareOf, topValueLabel, type TopListKey } from './insight-copy.js';
import { useInsights } from './useInsights.js';
import { ScreeningTable } from './ScreeningTable.js';

export interface InsightPanelProps {
  filter: WaitlistFilter;
  /** bumped when live signups or changes arrive; refetch at most every ~3 s */
  liveVersion: number;
  onAccessError: (error: unknown) => boolean;
  /** the admin clicked a top value: narrow the view (undefined = remove) */
  onFilter: (patch: Partial<WaitlistFilter>) => void;
}

/**
 * The insight panel of /admin (issue 10): signups per UTC day or week, the top countries, sources
 * and campaigns, the statuses and the confirmed share, for the view's filter, all counted by the
 * database (GET /api/admin/waitlist/insights). A top value is a toggle that narrows the view to it.
 */
export default function InsightPanel({ filter, liveVersion, onAccessError, onFilter }: InsightPanelProps) {
  const headingId = useId();
  // A refused session is the page's to handle (sign-out, second factor); any other failure shows
  // in the panel, which keeps the last numbers it had.
  const onError = useCallback((error: unknown) => void onAccessError(error), [onAccessError]);
  const insights = useInsights(filter, liveVersion, onError);
  // The chart's chunk downloads alongside the first numbers (a failure shows when the chart mounts).
  useEffect(() => void preloadChart().catch(() => undefined), []);
  const { data } = insights;
  const busy = insights.loading || insights.stale;

  return (
    <section aria-labelledby={headingId} aria-busy={busy} className="mt-8">
      <div className="flex flex-wrap items-baseline justify-between gap-x-4 gap-y-1">
        <h2 id={headingId} className="flex items-center gap-2 text-xl font-bold tracking-tight text-white">
          {insightTexts.heading}
          {data && busy && <SpinnerIcon className="size-4 text-emerald-300" />}
        </h2>
        {data && <p className="text-sm text-slate-300 tabular-nums">{insightTexts.matching(data.matching, data.total, !isEmptyFilter(filter))}</p>}
      </div>
      <div className={`${cardStyles} mt-4 p-5 sm:p-6`}>
        {!data && insights.failed && <CardLoadFailed text={insightTexts.loadFailed} retryLabel={insightTexts.tryAgain} onRetry={insights.retry} />}
        {!data && !insights.failed && <InsightSkeleton />}
        {data && (
          <>
            {insights.failed && !insights.loading && (
              <div className="mb-4 flex flex-wrap items-center gap-x-3 gap-y-1 text-sm">
                <span role="status" className="text-amber-200">
                  {insightTexts.refreshFailed}
                </span>
                <button type="button" className={buttonStyles.link} onClick={insights.retry}>
                  {insightTexts.tryAgain}
                </button>
              </div>
            )}
            {/* Numbers for the previous filter stay at full contrast (dimmed, the small print would fail
                WCAG's contrast); the heading's spinner and aria-busy say new ones are on their way. */}
            <InsightBody data={data} filter={filter} onFilter={onFilter} />
          </>
        )}
      </div>
    </section>
  );
}

function InsightBody({ data, filter, onFilter }: { data: WaitlistInsights; filter: WaitlistFilter; onFilter: InsightPanelProps['onFilter'] }) {
  return (
    <>
      <InsightChart series={data.series} bucket={data.bucket} />
      <div className="mt-8 border-t border-white/10 pt-6">
        {data.matching > 0 && <p className="mb-4 text-xs text-slate-400">{insightTexts.hint}</p>}
        <div className="grid grid-cols-1 gap-8 md:grid-cols-2 lg:grid-cols-3">
          {(['country', 'source', 'campaign'] as const).map((field) => (
            <TopList key={field} field={field} list={data[LIST_OF[field]]} matching={data.matching} active={filter[field]} onFilter={onFilter} />
          ))}
        </div>
        <StatusList data={data} active={filter.status} onFilter={onFilter} />
        {data.amounts && <AmountSums amounts={data.amounts} />}
        <ScreeningTable screening={data.screening} from={filter.from} to={filter.to} />
      </div>
    </>
  );
}

const usd = (n: number) => `$${n.toLocaleString('en-US')}`;

/** An offering list's non-binding intended amounts by band (issue 31): how many, and their sum at the bands' ends. */
function AmountSums({ amounts }: { amounts: NonNullable<WaitlistInsights['amounts']> }) {
  const min = amounts.reduce((sum, a) => sum + a.min, 0);
  const max = amounts.some((a) => a.max === null) ? null : amounts.reduce((sum, a) => sum + (a.max ?? 0), 0);
  return (
    <div className="mt-8">
      <h3 className="text-sm font-semibold text-white">Intended amounts (non-binding)</h3>
      <table className="mt-2 w-full max-w-xl text-left text-sm text-slate-200">
        <thead>
          <tr className="text-xs text-slate-400 uppercase">
            <th scope="col" className="py-1 pr-3">Band</th>
            <th scope="col" className="py-1 pr-3">Indications</th>
            <th scope="col" className="py-1">Sum at the band's ends</th>
          </tr>
        </thead>
        <tbody>
          {amounts.map((a) => (
            <tr key={a.key}>
              <td className="py-1 pr-3">{a.label}</td>
              <td className="py-1 pr-3">{a.count}</td>
              <td className="py-1">{a.max === null ? `${usd(a.min)} or more` : `${usd(a.min)} to ${usd(a.max)}`}</td>
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr className="font-medium text-white">
            <td className="py-1 pr-3">All bands</td>
            <td className="py-1 pr-3">{amounts.reduce((sum, a) => sum + a.count, 0)}</td>
            <td className="py-1">{max === null ? `${usd(min)} or more` : `${usd(min)} to ${usd(max)}`}</td>
          </tr>
        </tfoot>
      </table>
    </div>
  );
}

const LIST_OF = { country: 'countries', source: 'sources', campaign: 'campaigns' } as const satisfies Record<TopListKey, keyof WaitlistInsights>;

interface TopListProps {
  field: TopListKey;
  list: InsightsTopList;
  matching: number;
  /** The view's filter on this field (NONE_VALUE for "no value"). */
  active: string | undefined;
  onFilter: InsightPanelProps['onFilter'];
}

function TopList({ field, list, matching, active, onFilter }: TopListProps) {
  const headingId = useId();
  const empty = list.top.length === 0 && list.other === 0;
  return (
    <div className="min-w-0">
      <h3 id={headingId} className="text-base font-semibold text-white">
        {insightTexts.lists[field]}
      </h3>
      {empty ? (
        <p className="mt-3 text-sm text-slate-400">{insightTexts.emptyList}</p>
      ) : (
        <ul aria-labelledby={headingId} className="mt-3 space-y-3">
          {list.top.map((row) => {
            const value = row.value ?? NONE_VALUE;
            const pressed = active === value;
            const label = topValueLabel(field, row.value);
            return (
              <ShareRow key={value} count={row.count} share={shareOf(row.count, matching)} pressed={pressed}>
                <button
                  type="button"
                  aria-pressed={pressed}
                  title={insightTexts.valueTitle(label, pressed)}
                  onClick={() => onFilter({ [field]: pressed ? undefined : value })}
                  className={valueButton}
                >
                  {label}
                </button>
              </ShareRow>
            );
          })}
          {list.other > 0 && (
            <ShareRow count={list.other} share={shareOf(list.other, matching)} pressed={false}>
              <span className="min-w-0 truncate py-0.5 text-slate-400">{insightTexts.other}</span>
            </ShareRow>
          )}
        </ul>
      )}
    </div>
  );
}

/** Statuses present in the view, each a toggle like the top values, and the confirmed share when double opt-in is on. */
function StatusList({ data, active, onFilter }: { data: WaitlistInsights; active: EntryStatus | undefined; onFilter: InsightPanelProps['onFilter'] }) {
  const headingId = useId();
  const counts = new Map(data.statuses.map((s) => [s.status, s.count]));
  const shown = ENTRY_STATUSES.filter((status) => (counts.get(status) ?? 0) > 0 || status === active);
  return (
    <div className="mt-8">
      <div className="flex flex-wrap items-baseline justify-between gap-x-4 gap-y-1">
        <h3 id={headingId} className="text-base font-semibold text-white">
          {insightTexts.statuses}
        </h3>
        {data.confirmedShare !== null && <p className="text-sm font-medium text-emerald-200 tabular-nums">{insightTexts.confirmed(data.confirmedShare)}</p>}
      </div>
      {shown.length === 0 ? (
        <p className="mt-3 text-sm text-slate-400">{insightTexts.emptyList}</p>
      ) : (
        <ul aria-labelledby={headingId} className="mt-3 flex flex-wrap gap-2">
          {shown.map((status) => {
            const pressed = active === status;
            const label = insightTexts.statusLabel(status);
            const count = counts.get(status) ?? 0;
            return (
              <li key={status}>
                <button
                  type="button"
                  aria-pressed={pressed}
                  title={insightTexts.valueTitle(label, pressed)}
                  onClick={() => onFilter({ status: pressed ? undefined : status })}
                  className="inline-flex h-9 items-center gap-2 rounded-xl border border-white/10 bg-white/[0.03] px-3 text-sm font-medium text-slate-200 transition-colors hover:border-white/25 hover:text-white aria-pressed:border-emerald-300/60 aria-pressed:bg-emerald-400/10 aria-pressed:text-emerald-200"
                >
                  {label}
                  <span className="text-slate-400 tabular-nums">{formatCount(count)}</span>
                </button>
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}

const valueButton =
  'min-w-0 truncate rounded-sm py-0.5 text-left font-medium text-slate-100 underline-offset-4 transition-colors hover:text-emerald-200 hover:underline aria-pressed:text-emerald-300 aria-pressed:underline';

/** A value's line: its label (a button), count and share, over a bar as long as its share. */
function ShareRow({ count, share, pressed, children }: { count: number; share: number; pressed: boolean; children: ReactNode }) {
  return (
    <li>
      <div className="flex items-baseline justify-between gap-3 text-sm">
        {children}
        <span className="shrink-0 text-slate-300 tabular-nums">
          {formatCount(count)} <span className="text-slate-400">· {percentText(share)}</span>
        </span>
      </div>
      <div aria-hidden="true" className="mt-1 h-1.5 overflow-hidden rounded-full bg-white/5">
        <div className={`h-full rounded-full ${pressed ? 'bg-emerald-300' : 'bg-emerald-400/60'}`} style={{ width: `${Math.max(share > 0 ? 1 : 0, share * 100)}%` }} />
      </div>
    </li>
  );
}

/** First load: the panel's shapes, pulsing, announced as one status. */
function InsightSkeleton() {
  return (
    <div role="status" aria-label={insightTexts.loading}>
      <div aria-hidden="true" className="animate-pulse">
        <div className="h-5 w-48 rounded bg-white/10" />
        <div className="mt-4 h-[180px] rounded-xl bg-white/[0.05] min-[480px]:h-[240px]" />
        <div className="mt-8 grid grid-cols-1 gap-8 md:grid-cols-2 lg:grid-cols-3">
          {[0, 1, 2].map((i) => (
            <div key={i} className="space-y-3">
              <div className="h-4 w-32 rounded bg-white/10" />
              <div className="h-3 rounded bg-white/[0.06]" />
              <div className="h-3 w-5/6 rounded bg-white/[0.06]" />
              <div className="h-3 w-2/3 rounded bg-white/[0.06]" />
            </div>
          ))}
        </div>
      </div>
    </div>
  );
}
