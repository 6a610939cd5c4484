import { useCallback, useEffect, useId, useRef } from 'react';
import { isEmptyFilter, type WaitlistFilter } from '../../../shared/admin/waitlist-filter.js';
import type { WaitlistEntry } from '../../../shared/waitlist/entry.js';
import { notifyError } from '../../site/toast.js';
import { LoadingSpinner } from '../../ui/controls.js';
import { cardStyles } from '../../ui/styles.js';
import { countLine, filterTexts, loadTexts, matchLine, waitlistToasts } from './copy.js';
import { FilterBar } from './FilterBar.js';
import { HeldActions } from './HeldActions.js';
import { useSelection } from './selection.js';
import { useDeleteSelected } from './useDeleteSelected.js';
import { useExport } from './useExport.js';
import { filterKey } from './useFilterParams.js';
import { useInviteSelected } from './useInviteSelected.js';
import { useLiveRows } from './useLiveRows.js';
import { useWaitlist } from './useWaitlist.js';
import { WaitlistActions } from './WaitlistActions.js';
import type { RoleRights } from '../../../shared/admin/roles.js';
import { LiveIndicator, LoadProgress, TableMessage } from './WaitlistStatus.js';
import { WaitlistTable } from './WaitlistTable.js';

export interface WaitlistPanelProps {
  /** The view's filter (from the page address) and how to change it. */
  filter: WaitlistFilter;
  onFilterChange: (filter: WaitlistFilter) => void;
  onAccessError: (error: unknown) => boolean;
  /** E-mail on (true), off (false) or not known yet (null): Invite Selected needs it on. */
  mailEnabled: boolean | null;
  /** What the admin's role may do: the actions it may not are not shown (a viewer sees none). */
  rights: RoleRights;
  /** Invites were queued (or e-mail turned out off): the e-mail area reloads. */
  onMailChanged: () => void;
  /** A live signup or change arrived: the insight panel refreshes. */
  onLiveUpdate: () => void;
  /** The table's first page has loaded or failed (called again on later phase changes: it must be idempotent). */
  onFirstPageSettled: () => void;
  /** A view's first page has arrived, before it is rendered. */
  onFirstPage: (filter: WaitlistFilter) => void;
  /** An offering list's view (issue 31): the table's Intended amount column. */
  amountLabel?: ((key: string | null | undefined) => string) | undefined;
}

/** The waitlist: its counts, actions, filters and table, kept current by live updates. */
export function WaitlistPanel({ filter, onFilterChange, onAccessError, mailEnabled, rights, onMailChanged, onLiveUpdate, onFirstPageSettled, onFirstPage, amountLabel }: WaitlistPanelProps) {
  const { selection, version } = useSelection();
  const mailOffId = useId();
  const headingRef = useRef<HTMLHeadingElement>(null);

  const onLoadError = useCallback(
    (error: unknown, quiet: boolean) => {
      if (!onAccessError(error) && !quiet) notifyError(waitlistToasts.loadFailed);
    },
    [onAccessError],
  );
  const waitlist = useWaitlist(filter, onLoadError, onFirstPage);
  const { entries, total, matching, phase, hasMore, loaded, stale, loadMore, retry, invitedAt, invitedVersion } = waitlist;
  useEffect(() => {
    if (phase !== 'loading') onFirstPageSettled();
  }, [phase, onFirstPageSettled]);

  // A new filter is a new view: what was selected in the previous one is not in it.
  const viewKey = filterKey(filter);
  useEffect(() => selection.clear(), [viewKey, selection]);

  const liveStatus = useLiveRows(waitlist, onLiveUpdate, onAccessError, filter.list);
  const deletion = useDeleteSelected(selection, waitlist, onAccessError);
  const invite = useInviteSelected(selection, waitlist, { filter, mailEnabled, onMailChanged, onAccessError });
  const exports = useExport(selection, onAccessError, filter.list);

  // Every loaded row was deleted but more are on the server: fetch them (the table that asks is gone).
  useEffect(() => {
    if (entries.length === 0 && hasMore && phase === 'ready') loadMore();
  }, [entries.length, hasMore, phase, loadMore]);

  const filtered = !isEmptyFilter(filter);
  const selectedCount = selection.size;
  const allSelected = selectedCount > 0 && selectedCount >= matching;
  const allState = allSelected ? true : selectedCount > 0 ? 'indeterminate' : false;
  // The waitlist has entries (whatever the filter): the spec's buttons show.
  const hasEntries = total > 0 || entries.length > 0;

  const toggleAll = useCallback(() => {
    if (selection.size > 0 && selection.size >= matching) selection.clear();
    // Every entry of the view, loaded or not: O(1), nothing is built per entry.
    else if (matching > 0 && waitlist.until) selection.selectMatching(filter, waitlist.until, matching);
  }, [selection, matching, filter, waitlist.until]);

  const onToggleRow = useCallback(
    (entry: WaitlistEntry, checked: boolean) => {
      if (selection.mode === 'ids' || selection.covers(entry)) {
        selection.toggle(entry.id, checked);
        return;
      }
      if (!checked) return;
      // A live row that joined after the select-all: the select-all moves on to it, and covers the
      // live rows shown between (unticked, as they were).
      const at = Date.parse(entry.created_at);
      const newer: string[] = [];
      for (const row of entries) {
        if (selection.covers(row)) break;
        if (Date.parse(row.created_at) <= at) newer.push(row.id);
      }
      selection.extendMatching(entry.created_at, newer, entry.id);
    },
    [selection, entries],
  );
  const attributionId = useId();

  let body;
  if (entries.length === 0 && (phase === 'loading' || (phase === 'ready' && hasMore))) body = <LoadingSpinner />;
  else if (entries.length === 0 && phase === 'failed') body = <TableMessage text={loadTexts.failed} actionLabel={loadTexts.tryAgain} onAction={retry} />;
  else if (entries.length === 0 && filtered && total > 0) {
    body = <TableMessage text={filterTexts.noMatch} actionLabel={filterTexts.clear} onAction={() => onFilterChange({})} />;
  } else if (entries.length === 0) body = <p className="py-16 text-center text-slate-300">No waitlist entries yet.</p>;
  else {
    body = (
      // The previous filter's rows stay, dimmed and inert, until the new filter's first page is in.
      <div aria-busy={stale || undefined} inert={stale} className={stale ? 'opacity-60 transition-opacity' : undefined}>
        <WaitlistTable
          entries={entries}
          rowCount={matching}
          selection={selection}
          selectionVersion={version}
          allState={allState}
          onToggleAll={toggleAll}
          onToggleRow={onToggleRow}
          hasMore={hasMore && phase === 'ready' && !stale}
          onNearEnd={loadMore}
          invitedAt={invitedAt}
          invitedVersion={invitedVersion}
          amountLabel={amountLabel}
        />
      </div>
    );
  }

  return (
    <section aria-labelledby="waitlist-heading" className={`${cardStyles} p-5 sm:p-6`}>
      <div className="flex flex-col gap-4 lg:flex-row lg:items-end lg:justify-between">
        <div className="min-w-0">
          <div className="flex flex-wrap items-center gap-x-3 gap-y-1">
            <h1 id="waitlist-heading" ref={headingRef} tabIndex={-1} className="text-2xl font-bold tracking-tight text-white outline-none">
              Waitlist
            </h1>
            <LiveIndicator status={liveStatus} />
          </div>
          {loaded && <p className="mt-1 text-sm text-slate-300">{countLine(total, selectedCount)}</p>}
          {/* Always there (empty without a filter), so a search's result is announced when it arrives. */}
          <p aria-live="polite" className="text-sm text-slate-400">
            {loaded && filtered && !stale && phase !== 'loading' ? matchLine(matching) : ''}
          </p>
        </div>
        {filter.status === 'held' && entries.length > 0 && <HeldActions selection={selection} reload={waitlist.reload} onAccessError={onAccessError} />}
        {hasEntries && (rights.deleteEntries || rights.exportEntries || rights.invite) && (
          <WaitlistActions
            rights={rights}
            selectedCount={selectedCount}
            deletion={deletion}
            invite={invite}
            exports={exports}
            mailOff={mailEnabled === false}
            mailOffId={mailOffId}
            attributionId={attributionId}
            headingRef={headingRef}
          />
        )}
      </div>

      <div className="mt-6">
        <FilterBar filter={filter} onChange={onFilterChange} onAccessError={onAccessError} />
      </div>

      <div className="mt-4">
        {body}
        {entries.length > 0 && <LoadProgress phase={phase} loaded={entries.length} total={matching} onRetry={retry} />}
      </div>
    </section>
  );
}
