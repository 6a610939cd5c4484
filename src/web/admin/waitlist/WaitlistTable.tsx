import { memo, useCallback, useEffect, useLayoutEffect, useRef } from 'react';
import type { FocusEvent, ReactNode } from 'react';
import { defaultRangeExtractor, useVirtualizer } from '@tanstack/react-virtual';
import type { Range } from '@tanstack/react-virtual';
import type { Checkbox } from 'radix-ui';
import type { EntryStatus, WaitlistEntry } from '../../../shared/waitlist/entry.js';
import { formatSource } from '../../../shared/waitlist/attribution.js';
import { formatDateJoined, formatIpAddress, formatLocation } from '../../../shared/waitlist/display.js';
import { heldReasonText, statusTexts } from '../common/copy.js';
import { RowCheckbox } from '../common/RowCheckbox.js';
import { sourceTexts } from './copy.js';
import { shownStatus } from './entry-status.js';
import type { Selection } from './selection.js';

/** Every row has this height, so the virtualiser never measures. Long values are truncated (full text in a tooltip). */
const ROW_HEIGHT = 48;
const HEADER_HEIGHT = 44;
const OVERSCAN = 12;
/** The next page is asked for when the rows in view come this close to the last loaded row. */
const NEAR_END = 60;

export interface WaitlistTableProps {
  entries: readonly WaitlistEntry[];
  /** How many rows the whole view has (loaded or not), for aria-rowcount. */
  rowCount: number;
  selection: Selection;
  /** Changes whenever the selection does, so the memoised table re-renders the visible rows. */
  selectionVersion: number;
  /** The select-all checkbox: every entry of the view selected, some, or none. */
  allState: Checkbox.CheckedState;
  onToggleAll: () => void;
  onToggleRow: (entry: WaitlistEntry, checked: boolean) => void;
  /** More rows after the loaded ones: `onNearEnd` is called as the admin scrolls towards the end. */
  hasMore: boolean;
  onNearEnd: () => void;
  /** When the page invited a row after loading it (useWaitlist), overriding its loaded status. */
  invitedAt: (id: string) => string | undefined;
  /** Changes whenever rows are marked invited. */
  invitedVersion: number;
  /** An offering list's view (issue 31): the Intended amount column, each band key's label. */
  amountLabel?: ((key: string | null | undefined) => string) | undefined;
}

/**
 * The waitlist as a real <table> in a scroll box of fixed maximum height. Only the rows in view
 * (plus a margin, plus the row holding keyboard focus) are in the DOM; spacer rows keep the
 * scroll height, and aria-rowcount / aria-rowindex tell assistive technology where a row sits.
 * The loaded rows are a prefix of the view: nearing their end asks for the next page.
 */
export const WaitlistTable = memo(function WaitlistTable({
  entries,
  rowCount,
  selection,
  allState,
  onToggleAll,
  onToggleRow,
  hasMore,
  onNearEnd,
  invitedAt,
  amountLabel,
}: WaitlistTableProps) {
  const scrollRef = useRef<HTMLDivElement>(null);
  /** Index of the row that holds focus, kept rendered so Tab order survives scrolling. */
  const focusedIndexRef = useRef<number | null>(null);

  const rangeExtractor = useCallback((range: Range) => {
    const indexes = defaultRangeExtractor(range);
    const focused = focusedIndexRef.current;
    if (focused === null || focused >= range.count || indexes.includes(focused)) return indexes;
    return [...indexes, focused].sort((a, b) => a - b);
  }, []);

  // Stable while the rows are: the virtualizer recomputes every row's position (100,000 of them)
  // whenever this function changes, which a new arrow on each render did on every selection change.
  const getItemKey = useCallback((index: number) => entries[index]?.id ?? index, [entries]);

  // No React Compiler in this build: the virtualizer re-renders this component itself on scroll.
  // eslint-disable-next-line react-hooks/incompatible-library
  const virtualizer = useVirtualizer({
    count: entries.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    getItemKey,
    overscan: OVERSCAN,
    paddingStart: HEADER_HEIGHT,
    scrollPaddingStart: HEADER_HEIGHT,
    rangeExtractor,
    useFlushSync: false,
  });

  const onFocusRow = useCallback((event: FocusEvent<HTMLTableSectionElement>) => {
    const row = (event.target as HTMLElement).closest<HTMLElement>('tr[data-index]');
    focusedIndexRef.current = row ? Number(row.dataset.index) : null;
  }, []);
  const onBlurRow = useCallback((event: FocusEvent<HTMLTableSectionElement>) => {
    if (!event.currentTarget.contains(event.relatedTarget as Node | null)) focusedIndexRef.current = null;
  }, []);

  // Live signups go on top: a reader scrolled down keeps the rows they were looking at in place.
  const firstIdRef = useRef<string | undefined>(undefined);
  useLayoutEffect(() => {
    const before = firstIdRef.current;
    firstIdRef.current = entries[0]?.id;
    const box = scrollRef.current;
    if (!box || before === undefined || entries[0]?.id === before || box.scrollTop <= 0) return;
    // A live batch is small: the former first row is near the top, or gone (a new view).
    const limit = Math.min(entries.length, 2000);
    for (let i = 1; i < limit; i++) {
      if (entries[i]!.id === before) {
        box.scrollTop += i * ROW_HEIGHT;
        if (focusedIndexRef.current !== null) focusedIndexRef.current += i;
        return;
      }
    }
  }, [entries]);

  const items = virtualizer.getVirtualItems();
  const lastIndex = items.length > 0 ? items[items.length - 1]!.index : -1;
  useEffect(() => {
    if (hasMore && lastIndex >= entries.length - NEAR_END) onNearEnd();
  }, [hasMore, lastIndex, entries.length, onNearEnd]);

  const rows: ReactNode[] = [];
  let cursor = HEADER_HEIGHT;
  for (const item of items) {
    const entry = entries[item.index];
    if (!entry) continue;
    if (item.start > cursor) rows.push(<SpacerRow key={`gap-${item.index}`} height={item.start - cursor} />);
    const shown = shownStatus(entry, invitedAt(entry.id));
    rows.push(
      <WaitlistTableRow
        key={entry.id}
        entry={entry}
        index={item.index}
        selected={selection.isSelected(entry)}
        onToggle={onToggleRow}
        status={shown.status}
        statusSince={shown.since}
        amount={amountLabel ? amountLabel((entry as { intended_amount?: string | null }).intended_amount) : null}
      />,
    );
    cursor = item.end;
  }
  const totalSize = virtualizer.getTotalSize();
  if (totalSize > cursor) rows.push(<SpacerRow key="gap-end" height={totalSize - cursor} />);

  return (
    <div
      ref={scrollRef}
      role="region"
      aria-label="Waitlist entries"
      tabIndex={0}
      className="max-h-[min(36rem,70vh)] overflow-auto overscroll-contain rounded-xl border border-white/10 bg-ink/40"
    >
      <table
        className="w-full min-w-[62rem] table-fixed border-separate border-spacing-0 text-left text-sm"
        aria-rowcount={Math.max(rowCount, entries.length) + 1}
      >
        <colgroup>
          <col className="w-12" />
          <col className="w-[25%]" />
          <col className="w-[18%]" />
          <col className="w-[12%]" />
          <col />
          <col className="w-36" />
          <col className="w-[13%]" />
          {amountLabel && <col className="w-[14%]" />}
        </colgroup>
        <thead>
          <tr aria-rowindex={1} style={{ height: HEADER_HEIGHT }}>
            <th scope="col" className={headerCell}>
              <span className="flex items-center">
                <RowCheckbox checked={allState} onCheckedChange={onToggleAll} label="Select all" />
              </span>
            </th>
            <th scope="col" className={headerCell}>Email</th>
            <th scope="col" className={headerCell}>Date Joined</th>
            <th scope="col" className={headerCell}>IP Address</th>
            <th scope="col" className={headerCell}>Location</th>
            <th scope="col" className={headerCell}>{statusTexts.column}</th>
            <th scope="col" className={headerCell}>{sourceTexts.column}</th>
            {amountLabel && (
              <th scope="col" className={headerCell}>
                Intended amount
              </th>
            )}
          </tr>
        </thead>
        <tbody onFocus={onFocusRow} onBlur={onBlurRow}>
          {rows}
        </tbody>
      </table>
    </div>
  );
});

const headerCell =
  'sticky top-0 z-10 border-b border-white/10 bg-slate-900 px-3 text-xs font-semibold tracking-wide text-slate-300 uppercase';
const bodyCell = 'truncate border-b border-white/5 px-3';
const checkboxCell = 'border-b border-white/5 px-3';

function SpacerRow({ height }: { height: number }) {
  return (
    <tr aria-hidden="true">
      <td colSpan={8} style={{ height, padding: 0, border: 0 }} />
    </tr>
  );
}

interface WaitlistTableRowProps {
  entry: WaitlistEntry;
  index: number;
  selected: boolean;
  onToggle: (entry: WaitlistEntry, checked: boolean) => void;
  /** The Status column's value (the row's own, or 'invited' once the page invited it). */
  status: EntryStatus;
  statusSince: string | null;
  /** An offering list's row: its intended amount's label ('' for none); null on the portal's. */
  amount: string | null;
}

const WaitlistTableRow = memo(function WaitlistTableRow({ entry, index, selected, onToggle, status, statusSince, amount }: WaitlistTableRowProps) {
  const dateJoined = formatDateJoined(entry.created_at);
  const ip = formatIpAddress(entry.ip_address);
  const location = formatLocation(entry);
  return (
    <tr
      data-index={index}
      aria-rowindex={index + 2}
      style={{ height: ROW_HEIGHT }}
      className={selected ? 'bg-emerald-400/10' : 'hover:bg-white/[0.03]'}
    >
      <td className={checkboxCell}>
        <span className="flex items-center">
          <RowCheckbox checked={selected} onCheckedChange={(checked) => onToggle(entry, checked === true)} label={`Select ${entry.email}`} />
        </span>
      </td>
      <td className={`${bodyCell} font-medium text-slate-100`} title={entry.email}>
        {entry.email}
      </td>
      <td className={`${bodyCell} whitespace-nowrap text-slate-300`}>
        <time dateTime={entry.created_at}>{dateJoined}</time>
      </td>
      <td className={`${bodyCell} font-mono text-xs text-slate-300`} title={ip}>
        {ip}
      </td>
      <td className={`${bodyCell} text-slate-300`} title={location}>
        {location}
      </td>

      <td className={checkboxCell}>
        <StatusBadge status={status} since={statusSince} heldReason={entry.held_reason} />
      </td>
      {/* The whole attribution in the tooltip: the row keeps its one-line height. */}
      <td className={`${bodyCell} text-slate-300`} title={sourceTexts.tooltip(entry)}>
        {formatSource(entry.source)}
      </td>
      {amount !== null && <td className={`${bodyCell} text-slate-300`}>{amount || '—'}</td>}
    </tr>
  );
});

/** Colours per status, readable on the dark table (text at least 4.5:1 on the badge). */
const badgeStyles: Record<EntryStatus, { badge: string; dot: string }> = {
  pending: { badge: 'bg-amber-400/10 text-amber-200 ring-amber-300/30', dot: 'bg-amber-300' },
  joined: { badge: 'bg-slate-400/10 text-slate-200 ring-slate-300/25', dot: 'bg-slate-300' },
  confirmed: { badge: 'bg-emerald-400/10 text-emerald-200 ring-emerald-300/30', dot: 'bg-emerald-300' },
  invited: { badge: 'bg-sky-400/10 text-sky-200 ring-sky-300/30', dot: 'bg-sky-300' },
  unsubscribed: { badge: 'bg-rose-400/10 text-rose-200 ring-rose-300/30', dot: 'bg-rose-300' },
  held: { badge: 'bg-orange-400/10 text-orange-200 ring-orange-300/30', dot: 'bg-orange-300' },
};

function StatusBadge({ status, since, heldReason }: { status: EntryStatus; since: string | null; heldReason: string | null }) {
  const style = badgeStyles[status];
  const hint = statusTexts.hints[status](since ? formatDateJoined(since) : null);
  // A held entry's reason: in the tooltip, and read with the badge by screen readers.
  const reason = status === 'held' && heldReason ? heldReasonText(heldReason) : null;
  return (
    <span
      className={`inline-flex max-w-full items-center gap-1.5 rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset ${style.badge}`}
      title={reason ? `${hint}. Reason: ${reason}` : hint}
      data-held-reason={reason ? heldReason : undefined}
    >
      <span aria-hidden="true" className={`size-1.5 shrink-0 rounded-full ${style.dot}`} />
      <span className="truncate">{statusTexts.labels[status]}</span>
      {reason && <span className="sr-only">: {reason}</span>}
    </span>
  );
}
