import { memo, useCallback, useRef } from 'react';
import type { FocusEvent, ReactNode } from 'react';
import { defaultRangeExtractor, useVirtualizer } from '@tanstack/react-virtual';
import type { Range } from '@tanstack/react-virtual';
import { Checkbox } from 'radix-ui';
import type { WaitlistEntry } from '../../shared/waitlist/entry.js';
import { formatDateJoined, formatIpAddress, formatLocation } from '../../shared/waitlist/display.js';
import type { Selection } from './selection.js';

/** Every row has this height, so the virtualiser never measures. Long values are truncated (full text in a tooltip). */
const ROW_HEIGHT = 48;
const HEADER_HEIGHT = 44;
const OVERSCAN = 12;

export interface WaitlistTableProps {
  entries: readonly WaitlistEntry[];
  selection: Selection;
  /** Changes whenever the selection does, so the memoised table re-renders the visible rows. */
  selectionVersion: number;
  onToggleAll: () => void;
}

/**
 * The waitlist as a real <table> in a scroll box of fixed maximum height. Only the rows in view
 * (plus a margin, plus the row holding keyboard focus) are in the DOM; spacer rows keep the
 * scroll height, and aria-rowcount / aria-rowindex tell assistive technology where a row sits.
 */
export const WaitlistTable = memo(function WaitlistTable({ entries, selection, onToggleAll }: WaitlistTableProps) {
  const scrollRef = useRef<HTMLDivElement>(null);
  /** Index of the row that holds focus, kept rendered so Tab order survives scrolling. */
  const focusedIndexRef = useRef<number | null>(null);

  const rangeExtractor = useCallback((range: Range) => {
    const indexes = defaultRangeExtractor(range);
    const focused = focusedIndexRef.current;
    if (focused === null || focused >= range.count || indexes.includes(focused)) return indexes;
    return [...indexes, focused].sort((a, b) => a - b);
  }, []);

  // No React Compiler in this build: the virtualizer re-renders this component itself on scroll.
  // eslint-disable-next-line react-hooks/incompatible-library
  const virtualizer = useVirtualizer({
    count: entries.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    getItemKey: (index) => entries[index]?.id ?? index,
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

  const onToggleRow = useCallback(
    (id: string, checked: boolean) => selection.toggle(id, checked),
    [selection],
  );

  const selectedCount = selection.size;
  const allSelected = entries.length > 0 && selectedCount >= entries.length;
  const headerState: Checkbox.CheckedState = allSelected ? true : selectedCount > 0 ? 'indeterminate' : false;

  const items = virtualizer.getVirtualItems();
  const rows: ReactNode[] = [];
  let cursor = HEADER_HEIGHT;
  for (const item of items) {
    const entry = entries[item.index];
    if (!entry) continue;
    if (item.start > cursor) rows.push(<SpacerRow key={`gap-${item.index}`} height={item.start - cursor} />);
    rows.push(
      <WaitlistTableRow
        key={entry.id}
        entry={entry}
        index={item.index}
        selected={selection.has(entry.id)}
        onToggle={onToggleRow}
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
      <table className="w-full min-w-[46rem] table-fixed border-separate border-spacing-0 text-left text-sm" aria-rowcount={entries.length + 1}>
        <colgroup>
          <col className="w-12" />
          <col className="w-[32%]" />
          <col className="w-[22%]" />
          <col className="w-[16%]" />
          <col />
        </colgroup>
        <thead>
          <tr aria-rowindex={1} style={{ height: HEADER_HEIGHT }}>
            <th scope="col" className={headerCell}>
              <span className="flex items-center">
                <RowCheckbox checked={headerState} onCheckedChange={onToggleAll} label="Select all" />
              </span>
            </th>
            <th scope="col" className={headerCell}>Email</th>
            <th scope="col" className={headerCell}>Date Joined</th>
            <th scope="col" className={headerCell}>IP Address</th>
            <th scope="col" className={headerCell}>Location</th>
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
      <td colSpan={5} style={{ height, padding: 0, border: 0 }} />
    </tr>
  );
}

interface WaitlistTableRowProps {
  entry: WaitlistEntry;
  index: number;
  selected: boolean;
  onToggle: (id: string, checked: boolean) => void;
}

const WaitlistTableRow = memo(function WaitlistTableRow({ entry, index, selected, onToggle }: WaitlistTableRowProps) {
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
          <RowCheckbox checked={selected} onCheckedChange={(checked) => onToggle(entry.id, checked === true)} label={`Select ${entry.email}`} />
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
    </tr>
  );
});

interface RowCheckboxProps {
  checked: Checkbox.CheckedState;
  onCheckedChange: (checked: Checkbox.CheckedState) => void;
  label: string;
}

function RowCheckbox({ checked, onCheckedChange, label }: RowCheckboxProps) {
  return (
    <Checkbox.Root
      checked={checked}
      onCheckedChange={onCheckedChange}
      aria-label={label}
      className="flex size-5 shrink-0 items-center justify-center rounded-md border border-slate-400 bg-transparent text-slate-950 transition-colors hover:border-emerald-300 data-[state=checked]:border-emerald-400 data-[state=checked]:bg-emerald-400 data-[state=indeterminate]:border-emerald-400 data-[state=indeterminate]:bg-emerald-400"
    >
      <Checkbox.Indicator>
        {checked === 'indeterminate' ? (
          <svg viewBox="0 0 16 16" className="size-3.5" aria-hidden="true">
            <path d="M3.5 8h9" stroke="currentColor" strokeWidth="2" strokeLinecap="round" />
          </svg>
        ) : (
          <svg viewBox="0 0 16 16" className="size-3.5" aria-hidden="true">
            <path d="m3.5 8.5 3 3 6-7" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" strokeLinejoin="round" />
          </svg>
        )}
      </Checkbox.Indicator>
    </Checkbox.Root>
  );
}
