import { Suspense, useCallback, useEffect, useId, useRef, useState } from 'react';
import type { MouseEvent } from 'react';
import { Link, useNavigate } from '../site/router.js';
import { ADMIN_MAX_IDS, MAIL_DISABLED_CODE, type ExportRequest, type InviteResult } from '../../shared/admin/waitlist-api.js';
import { filterFromSearchParams, isEmptyFilter, type WaitlistFilter } from '../../shared/admin/waitlist-filter.js';
import { PAGES } from '../../shared/site/pages.js';
import type { WaitlistEntry } from '../../shared/waitlist/entry.js';
import { authErrorMessage, getAuthClient } from '../session/auth-client.js';
import { checkAssurance } from '../session/mfa.js';
import { siteContent } from '../../shared/site/content.js';
import { LogoMark } from '../site/Logo.js';
import { PageFrame } from '../site/PageFrame.js';
import { notifyError, notifySuccess } from '../site/toast.js';
import { buttonStyles, LoadingSpinner, SpinnerIcon } from '../ui/controls.js';
import { cardStyles } from '../ui/styles.js';
import { preloadableLazy } from '../ui/preloadable-lazy.js';
import { AccountPanel, RequiredEnrolment } from './account/AccountPanel.js';
import { AdminApiError, fetchWaitlistInsights, isAbort, isInsufficientAal, isUnauthorized } from './common/admin-api.js';
import { mailOffText, sessionToasts } from './common/copy.js';
import { useAdminSession } from './common/useAdminSession.js';
import { dropPrefetchedInsights, prefetchInsights } from './insights/insights-prefetch.js';
import { MailPanel } from './mail/MailPanel.js';
import { useMailStatus } from './mail/useMailStatus.js';
import { countLine, exportTexts, filterTexts, inviteTexts, liveTexts, loadTexts, matchLine, waitlistToasts, type InviteCounts } from './waitlist/copy.js';
import { DeleteDialog } from './waitlist/DeleteDialog.js';
import { expectInvite, type InviteExpectation } from './waitlist/entry-status.js';
import { downloadExport } from './waitlist/export-download.js';
import { FilterBar } from './waitlist/FilterBar.js';
import { dropPrefetchedFirstPage, prefetchFirstPage } from './waitlist/first-page-prefetch.js';
import { InviteDialog } from './waitlist/InviteDialog.js';
import { useSelection } from './waitlist/selection.js';
import { filterKey, useFilterParams } from './waitlist/useFilterParams.js';
import { useLiveWaitlist, type LiveStatus } from './waitlist/useLiveWaitlist.js';
import { useWaitlist, type UseWaitlist } from './waitlist/useWaitlist.js';
import { deleteMatchingEntries, deleteWaitlistEntries, inviteMatchingEntries, inviteWaitlistEntries } from './waitlist/waitlist-api.js';
import { WaitlistTable } from './waitlist/WaitlistTable.js';

// The insight panel carries the chart: its own chunk, so the table's first rows do not wait for it.
// Its download starts with this module's, so it is usually in by the time the session is checked
// and the panel renders without suspending (see preloadableLazy).
const InsightPanel = preloadableLazy(() => import('./insights/InsightPanel.js'));
void InsightPanel.preload();

/** The table's first page is asked for as soon as the stored session allows, from the address's filter. */
function prefetchTable(): void {
  prefetchFirstPage(filterFromSearchParams(new URLSearchParams(window.location.search)));
}

/** /admin: the waitlist panel, shown once a session is confirmed. */
export default function AdminPage() {
  const session = useAdminSession(prefetchTable);
  useEffect(() => dropPrefetchedFirstPage, []);
  if (session.status === 'checking') {
    return (
      <main className="flex min-h-dvh items-center justify-center">
        <h1 className="sr-only">{siteContent.pageTitles.admin}</h1>
        <LoadingSpinner />
      </main>
    );
  }
  return <AdminDashboard email={session.email} />;
}

function AdminDashboard({ email }: { email: string }) {
  const navigate = useNavigate();
  const [signingOut, setSigningOut] = useState(false);
  /** 'enrol': ADMIN_MFA=required and no factor yet, so the admin API refuses the waitlist until one is set up. */
  const [view, setView] = useState<'panel' | 'enrol'>('panel');
  const endingSession = useRef(false);
  const signingOutRef = useRef(false);
  const checkingAal = useRef(false);

  /** The admin API no longer accepts the session (401): sign out locally (scope 'local') and go to /auth. */
  const endExpiredSession = useCallback(async () => {
    // A sign-out in progress revokes the token first: requests still in flight then get a 401 too.
    if (endingSession.current || signingOutRef.current) return;
    endingSession.current = true;
    const auth = getAuthClient();
    // Signed out in another tab meanwhile: nothing to announce, the SIGNED_OUT event moves us on.
    const { data } = await auth.getSession().catch(() => ({ data: { session: null } }));
    if (data.session) notifyError(sessionToasts.sessionExpired);
    await auth.signOut({ scope: 'local' }).catch(() => undefined);
    void navigate(PAGES.auth.path, { replace: true });
  }, [navigate]);

  /**
   * The admin API answered `insufficient_aal`: either a code is due (a factor added since this page
   * checked, say), which /auth asks for, or the server requires a factor this admin does not have yet.
   */
  const requireSecondFactor = useCallback(async () => {
    if (checkingAal.current || endingSession.current || signingOutRef.current) return;
    checkingAal.current = true;
    const assurance = await checkAssurance().catch(() => ({ kind: 'signed-out' }) as const);
    checkingAal.current = false;
    if (assurance.kind === 'signed-in') setView('enrol');
    else void navigate(PAGES.auth.path, { replace: true });
  }, [navigate]);

  /** Handles the admin API's refusals of the session itself; false for any other error. */
  const onAccessError = useCallback(
    (error: unknown): boolean => {
      if (isUnauthorized(error)) void endExpiredSession();
      else if (isInsufficientAal(error)) void requireSecondFactor();
      else return false;
      return true;
    },
    [endExpiredSession, requireSecondFactor],
  );

  // The e-mail status: Invite Selected needs it, the e-mail area shows it. Its own load failure
  // shows in that area; a refused session is handled like any admin call's.
  const onMailError = useCallback((error: unknown) => void onAccessError(error), [onAccessError]);
  const mail = useMailStatus(onMailError);
  const mailEnabled = mail.state.status === 'ready' ? mail.state.mail.enabled : null;

  // The view's filter lives in the address; the table and the insight panel both follow it.
  const [filter, setFilter] = useFilterParams();
  const onFilterPatch = useCallback(
    (patch: Partial<WaitlistFilter>) => {
      const next: WaitlistFilter = { ...filter };
      for (const [key, value] of Object.entries(patch) as Array<[keyof WaitlistFilter, string | undefined]>) {
        if (value === undefined || value === '') delete next[key];
        else (next as Record<string, string>)[key] = value;
      }
      setFilter(next);
    },
    [filter, setFilter],
  );
  /** Bumped by every live signup or change, so the insight panel refreshes. */
  const [liveVersion, setLiveVersion] = useState(0);
  const onLiveUpdate = useCallback(() => setLiveVersion((n) => n + 1), []);
  /**
   * The insight panel's queries start once the table's first page is in: on SQLite (one connection)
   * and on a busy PostgreSQL they would otherwise hold the first rows back by their own time.
   */
  const [tableStarted, setTableStarted] = useState(false);
  /**
   * The panel's first request goes out as the first page arrives, not once the table has rendered.
   * Once the panel is shown (the first page in, or failed) it makes its own requests.
   */
  const panelRequested = useRef(false);
  const onFirstPageSettled = useCallback(() => {
    panelRequested.current = true;
    setTableStarted(true);
  }, []);
  const onFirstPage = useCallback((first: WaitlistFilter) => {
    if (panelRequested.current) return;
    panelRequested.current = true;
    prefetchInsights(first);
  }, []);
  useEffect(() => dropPrefetchedInsights, []);

  async function handleSignOut() {
    setSigningOut(true);
    signingOutRef.current = true;
    // Default scope ('global'): ends every session of this admin, as the spec's POST /logout?scope=global.
    const { error } = await getAuthClient()
      .signOut()
      .catch((thrown: unknown) => ({ error: thrown }));
    if (error) {
      signingOutRef.current = false;
      setSigningOut(false);
      notifyError(sessionToasts.signOutFailed(authErrorMessage(error)));
      return;
    }
    notifySuccess(sessionToasts.signedOut);
    void navigate(PAGES.auth.path, { replace: true });
  }

  return (
    <PageFrame>
      <header className="border-b border-white/10">
        <div className="mx-auto flex max-w-6xl flex-wrap items-center justify-between gap-x-6 gap-y-3 px-5 py-4 sm:px-8">
          <div className="flex min-w-0 items-center gap-3">
            <LogoMark className="size-8 shrink-0" />
            <p className="min-w-0 truncate text-sm text-slate-300">
              Welcome, <span className="font-medium text-white">{email}</span>
            </p>
          </div>
          <div className="flex items-center gap-2">
            <Link to={PAGES.home.path} className={buttonStyles.secondary}>
              View Site
            </Link>
            <button type="button" className={buttonStyles.secondary} onClick={() => void handleSignOut()} disabled={signingOut}>
              {signingOut && <SpinnerIcon />}
              Sign Out
            </button>
          </div>
        </div>
      </header>
      <main className="mx-auto w-full max-w-6xl flex-1 px-5 py-8 sm:px-8 sm:py-12">
        {view === 'enrol' ? (
          <RequiredEnrolment onEnrolled={() => setView('panel')} />
        ) : (
          <>
            <WaitlistPanel
              filter={filter}
              onFilterChange={setFilter}
              onAccessError={onAccessError}
              mailEnabled={mailEnabled}
              onMailChanged={mail.refresh}
              onLiveUpdate={onLiveUpdate}
              onFirstPageSettled={onFirstPageSettled}
              onFirstPage={onFirstPage}
            />
            {tableStarted && (
              <Suspense fallback={null}>
                <InsightPanel filter={filter} liveVersion={liveVersion} onAccessError={onAccessError} onFilter={onFilterPatch} />
              </Suspense>
            )}
            <MailPanel mail={mail} onAccessError={onAccessError} />
            <AccountPanel email={email} onAccessError={onAccessError} />
          </>
        )}
      </main>
    </PageFrame>
  );
}

interface WaitlistPanelProps {
  /** The view's filter (from the page address) and how to change it. */
  filter: WaitlistFilter;
  onFilterChange: (filter: WaitlistFilter) => void;
  onAccessError: (error: unknown) => boolean;
  /** E-mail on (true), off (false) or not known yet (null): Invite Selected needs it on. */
  mailEnabled: boolean | null;
  /** Invites were queued (or e-mail turned out off): the e-mail area reloads. */
  onMailChanged: () => void;
  /** A live signup or change arrived: the insight panel refreshes. */
  onLiveUpdate: () => void;
  /** The table's first page has loaded or failed (called again on later phase changes: it must be idempotent). */
  onFirstPageSettled: () => void;
  /** A view's first page has arrived, before it is rendered. */
  onFirstPage: (filter: WaitlistFilter) => void;
}


/** Recounts after changes elsewhere wait this long, so a burst of them costs one request. */
const RECOUNT_DELAY_MS = 1000;

function WaitlistPanel({ filter, onFilterChange, onAccessError, mailEnabled, onMailChanged, onLiveUpdate, onFirstPageSettled, onFirstPage }: WaitlistPanelProps) {
  const { selection, version } = useSelection();
  const [dialogOpen, setDialogOpen] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const [inviteOpen, setInviteOpen] = useState(false);
  const [inviting, setInviting] = useState(false);
  /** Counting the statuses of a select-all's entries, before the invite dialog opens. */
  const [preparingInvite, setPreparingInvite] = useState(false);
  /** What the invite dialog says: how many of the selection are invitable. */
  const [inviteCounts, setInviteCounts] = useState({ invitable: 0, selected: 0 });
  const expectedInviteRef = useRef<InviteExpectation | null>(null);
  const inviteButtonRef = useRef<HTMLButtonElement>(null);
  const mailOffId = useId();
  const [exporting, setExporting] = useState<'all' | 'selected' | null>(null);
  const [withAttribution, setWithAttribution] = useState(false);
  const headingRef = useRef<HTMLHeadingElement>(null);
  const deleteButtonRef = useRef<HTMLButtonElement>(null);

  const onLoadError = useCallback(
    (error: unknown, quiet: boolean) => {
      if (!onAccessError(error) && !quiet) notifyError(waitlistToasts.loadFailed);
    },
    [onAccessError],
  );
  const waitlist = useWaitlist(filter, onLoadError, onFirstPage);
  const { entries, total, matching, phase, hasMore, loaded, stale, loadMore, retry, removeEntries, markInvited, invitedAt, invitedVersion, reload } = waitlist;
  useEffect(() => {
    if (phase !== 'loading') onFirstPageSettled();
  }, [phase, onFirstPageSettled]);

  // A new filter is a new view: what was selected in the previous one is not in it.
  const viewKey = filterKey(filter);
  useEffect(() => selection.clear(), [viewKey, selection]);

  // Live updates: new signups on top, counts and the insight panel kept current.
  const recountTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(recountTimer.current), []);
  // An export still asking how its download goes stops asking when the page goes away.
  const exportAbort = useRef<AbortController | null>(null);
  useEffect(() => () => exportAbort.current?.abort(), []);
  const liveStatus = useLiveWaitlist({
    onSignup: (signups) => {
      waitlist.addLive(signups);
      onLiveUpdate();
    },
    onChange: () => {
      if (recountTimer.current === undefined) {
        recountTimer.current = setTimeout(() => {
          recountTimer.current = undefined;
          waitlist.refreshCounts();
        }, RECOUNT_DELAY_MS);
      }
      onLiveUpdate();
    },
    onReconnected: () => {
      waitlist.refreshCounts();
      onLiveUpdate();
    },
    onAccessError,
  });

  // Every loaded row was deleted but more are on the server: fetch them (the table that asks is gone).
  useEffect(() => {
    if (entries.length === 0 && hasMore && phase === 'ready') loadMore();
  }, [entries.length, hasMore, phase, loadMore]);

  const filtered = !isEmptyFilter(filter);
  const selectedCount = selection.size;
  const summary = countLine(total, selectedCount);
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

  function openDelete(event: MouseEvent<HTMLButtonElement>) {
    if (selection.size === 0) {
      event.preventDefault();
      notifyError(waitlistToasts.noSelectionDelete);
    }
  }

  async function confirmDelete() {
    if (selection.size === 0) {
      setDialogOpen(false);
      notifyError(waitlistToasts.noSelectionDelete);
      return;
    }
    setDeleting(true);
    const request = selection.toRequest();
    if ('filter' in request) {
      // A select-all: the server deletes every match (loaded or not), and the view reloads.
      try {
        const deleted = await deleteMatchingEntries(request);
        selection.clear();
        notifySuccess(waitlistToasts.deleted(deleted));
        reload();
      } catch (error) {
        if (!onAccessError(error)) notifyError(waitlistToasts.deleteFailed(authErrorMessage(error)));
      } finally {
        setDeleting(false);
        setDialogOpen(false);
      }
      return;
    }
    const ids = request.ids;
    let deleted: WaitlistEntry[] = [];
    try {
      // The API takes at most ADMIN_MAX_IDS ids per request; larger selections go in several.
      for (let start = 0; start < ids.length; start += ADMIN_MAX_IDS) {
        const result = await deleteWaitlistEntries(ids.slice(start, start + ADMIN_MAX_IDS));
        deleted = deleted.concat(result.deleted);
      }
      removeEntries(deleted.map((entry) => entry.id));
      selection.clear();
      notifySuccess(waitlistToasts.deleted(deleted.length));
    } catch (error) {
      if (deleted.length > 0) {
        const gone = deleted.map((entry) => entry.id);
        removeEntries(gone);
        selection.remove(gone);
      }
      if (!onAccessError(error)) notifyError(waitlistToasts.deleteFailed(authErrorMessage(error)));
    } finally {
      setDeleting(false);
      setDialogOpen(false);
    }
  }

  async function openInvite(event: MouseEvent<HTMLButtonElement>) {
    if (mailEnabled === false) {
      event.preventDefault();
      notifyError(waitlistToasts.mailOff(mailOffText));
      return;
    }
    if (selection.size === 0) {
      event.preventDefault();
      notifyError(waitlistToasts.noSelectionInvite);
      return;
    }
    const selected = selection.size;
    if (selection.mode === 'ids' || !hasMore) {
      const expected = expectInvite(selection, entries, invitedAt, null);
      expectedInviteRef.current = expected;
      setInviteCounts({ invitable: expected.counts.invited, selected });
      return;
    }
    // A select-all reaching past the loaded rows: the database counts its entries by status first.
    event.preventDefault();
    setPreparingInvite(true);
    try {
      const request = selection.toRequest();
      const insights = await fetchWaitlistInsights('filter' in request ? request.filter : filter);
      const expected = expectInvite(selection, entries, invitedAt, insights.statuses);
      expectedInviteRef.current = expected;
      setInviteCounts({ invitable: expected.counts.invited, selected });
      setInviteOpen(true);
    } catch (error) {
      if (!onAccessError(error)) notifyError(waitlistToasts.inviteFailed(authErrorMessage(error)));
    } finally {
      setPreparingInvite(false);
    }
  }

  async function confirmInvite() {
    const request = selection.toRequest();
    if (selection.size === 0) {
      setInviteOpen(false);
      notifyError(waitlistToasts.noSelectionInvite);
      return;
    }
    setInviting(true);
    const expected = expectedInviteRef.current ?? expectInvite(selection, entries, invitedAt, null);
    const done: InviteCounts = { invited: 0, skipped: { pending: 0, unsubscribed: 0, alreadyInvited: 0 } };
    const add = (chunk: readonly string[] | null, result: InviteResult) => {
      done.invited += result.invited;
      done.skipped.pending += result.skipped.pending;
      done.skipped.unsubscribed += result.skipped.unsubscribed;
      done.skipped.alreadyInvited += result.skipped.alreadyInvited;
      // The server does not list whom it invited (see the contract): the rows the table showed
      // as joined or confirmed are the ones, unless the counts below say otherwise.
      markInvited(chunk ? chunk.filter((id) => expected.loadedInvitable.has(id)) : expected.loadedInvitable, result.invitedAt);
    };
    try {
      if ('filter' in request) add(null, await inviteMatchingEntries(request));
      else {
        // At most ADMIN_MAX_IDS ids per request (each one transaction); larger selections go in several.
        for (let start = 0; start < request.ids.length; start += ADMIN_MAX_IDS) {
          const chunk = request.ids.slice(start, start + ADMIN_MAX_IDS);
          add(chunk, await inviteWaitlistEntries(chunk));
        }
      }
      selection.clear();
      notifySuccess(waitlistToasts.invited(done));
      // Someone changed these people since the table loaded them (confirmed, unsubscribed, invited
      // from another tab): the table reloads to show what the server has.
      if (!sameCounts(done, expected.counts)) reload();
    } catch (error) {
      if (!onAccessError(error)) notifyError(waitlistToasts.inviteFailed(error instanceof AdminApiError && error.code === MAIL_DISABLED_CODE ? mailOffText : authErrorMessage(error)));
    } finally {
      setInviting(false);
      setInviteOpen(false);
      expectedInviteRef.current = null;
      onMailChanged();
    }
  }

  async function runExport(kind: 'all' | 'selected') {
    let body: ExportRequest = {};
    if (kind === 'selected') {
      if (selection.size === 0) {
        notifyError(waitlistToasts.noSelectionExport);
        return;
      }
      const request = selection.toRequest();
      if ('ids' in request && request.ids.length > ADMIN_MAX_IDS) {
        notifyError(waitlistToasts.exportTooMany(ADMIN_MAX_IDS));
        return;
      }
      body = request;
    }
    setExporting(kind);
    try {
      const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
      const controller = new AbortController();
      exportAbort.current = controller;
      const file = await downloadExport({ ...body, ...(timeZone ? { timeZone } : {}), ...(withAttribution ? { attribution: true } : {}) }, controller.signal);
      notifySuccess(waitlistToasts.exported(file.rows, kind));
    } catch (error) {
      // Left the page while the browser downloads: nobody is waiting for the toast.
      if (isAbort(error)) return;
      if (!onAccessError(error)) notifyError(waitlistToasts.exportFailed(authErrorMessage(error)));
    } finally {
      setExporting(null);
    }
  }

  /** Radix would refocus the trigger, which is disabled once the deleted rows' selection is cleared. */
  const onDialogCloseAutoFocus = useCallback((event: Event) => {
    event.preventDefault();
    const trigger = deleteButtonRef.current;
    if (trigger && !trigger.disabled) trigger.focus();
    else headingRef.current?.focus();
  }, []);
  const onInviteCloseAutoFocus = useCallback((event: Event) => {
    event.preventDefault();
    const trigger = inviteButtonRef.current;
    if (trigger && !trigger.disabled) trigger.focus();
    else headingRef.current?.focus();
  }, []);
  const mailOff = mailEnabled === false;
  const clearFilters = () => onFilterChange({});
  const attributionId = useId();

  let body;
  if (entries.length === 0 && (phase === 'loading' || (phase === 'ready' && hasMore))) body = <LoadingSpinner />;
  else if (entries.length === 0 && phase === 'failed') body = <TableMessage text={loadTexts.failed} actionLabel={loadTexts.tryAgain} onAction={retry} />;
  else if (entries.length === 0 && filtered && total > 0) {
    body = <TableMessage text={filterTexts.noMatch} actionLabel={filterTexts.clear} onAction={clearFilters} />;
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
          {loaded && <p className="mt-1 text-sm text-slate-300">{summary}</p>}
          {/* Always there (empty without a filter), so a search's result is announced when it arrives. */}
          <p aria-live="polite" className="text-sm text-slate-400">
            {loaded && filtered && !stale && phase !== 'loading' ? matchLine(matching) : ''}
          </p>
        </div>
        {hasEntries && (
          <div className="flex flex-col gap-2 lg:items-end">
            <div className="flex flex-wrap gap-2">
              <DeleteDialog
                open={dialogOpen}
                onOpenChange={setDialogOpen}
                count={selectedCount}
                deleting={deleting}
                onConfirm={() => void confirmDelete()}
                onCloseAutoFocus={onDialogCloseAutoFocus}
                trigger={
                  <button
                    ref={deleteButtonRef}
                    type="button"
                    className={buttonStyles.danger}
                    disabled={selectedCount === 0 || deleting}
                    onClick={openDelete}
                  >
                    Delete Selected
                  </button>
                }
              />
              <button
                type="button"
                className={buttonStyles.secondary}
                disabled={selectedCount === 0 || exporting !== null}
                onClick={() => void runExport('selected')}
              >
                {exporting === 'selected' && <SpinnerIcon />}
                Export Selected
              </button>
              <button type="button" className={buttonStyles.primary} disabled={exporting !== null} onClick={() => void runExport('all')}>
                {exporting === 'all' && <SpinnerIcon />}
                Export All
              </button>
              <InviteDialog
                open={inviteOpen}
                onOpenChange={setInviteOpen}
                invitable={inviteCounts.invitable}
                selected={inviteCounts.selected}
                inviting={inviting}
                onConfirm={() => void confirmInvite()}
                onCloseAutoFocus={onInviteCloseAutoFocus}
                trigger={
                  // E-mail off: aria-disabled, not disabled, so the button stays focusable and its reason is read.
                  <button
                    ref={inviteButtonRef}
                    type="button"
                    className={`${buttonStyles.secondary} aria-disabled:cursor-not-allowed aria-disabled:opacity-50 aria-disabled:hover:border-white/15 aria-disabled:hover:bg-white/5`}
                    disabled={!mailOff && (selectedCount === 0 || inviting || preparingInvite)}
                    aria-disabled={mailOff || undefined}
                    aria-describedby={mailOff ? mailOffId : undefined}
                    title={mailOff ? mailOffText : undefined}
                    onClick={(event) => void openInvite(event)}
                  >
                    {(inviting || preparingInvite) && <SpinnerIcon />}
                    {inviteTexts.button}
                  </button>
                }
              />
              {mailOff && (
                <span id={mailOffId} hidden>
                  {mailOffText}
                </span>
              )}
            </div>
            <div className="flex items-center gap-2 text-sm text-slate-300">
              <input
                id={attributionId}
                type="checkbox"
                className="size-4 accent-emerald-400"
                checked={withAttribution}
                onChange={(event) => setWithAttribution(event.target.checked)}
              />
              <label htmlFor={attributionId}>{exportTexts.attribution}</label>
            </div>
          </div>
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

function sameCounts(a: InviteCounts, b: InviteCounts): boolean {
  return (
    a.invited === b.invited &&
    a.skipped.pending === b.skipped.pending &&
    a.skipped.unsubscribed === b.skipped.unsubscribed &&
    a.skipped.alreadyInvited === b.skipped.alreadyInvited
  );
}

/** The live updates' state: a dot and a word, announced politely when it changes. */
function LiveIndicator({ status }: { status: LiveStatus }) {
  const text = status === 'live' ? liveTexts.live : status === 'connecting' ? liveTexts.connecting : liveTexts.reconnecting;
  return (
    <span role="status" title={liveTexts.hint} className="inline-flex items-center gap-1.5 rounded-full bg-white/5 px-2 py-0.5 text-xs font-medium text-slate-300 ring-1 ring-white/10 ring-inset">
      <span aria-hidden="true" className={`size-1.5 rounded-full ${status === 'live' ? 'bg-emerald-400' : 'bg-amber-300'}`} />
      {text}
    </span>
  );
}

/** Loading further pages under the table (not a role=status: the page spinner owns 'Loading'). */
function LoadProgress({ phase, loaded, total, onRetry }: { phase: UseWaitlist['phase']; loaded: number; total: number; onRetry: () => void }) {
  return (
    <div aria-live="polite" className="mt-3 flex min-h-6 flex-wrap items-center gap-x-3 gap-y-1 text-xs text-slate-400">
      {phase === 'loading-more' && (
        <>
          <SpinnerIcon className="size-3" />
          <span>{loadTexts.more(loaded, Math.max(loaded, total))}</span>
        </>
      )}
      {phase === 'failed' && (
        <>
          <span className="text-slate-300">{loadTexts.stopped(loaded, Math.max(loaded, total))}</span>
          <button type="button" className={buttonStyles.link} onClick={onRetry}>
            {loadTexts.tryAgain}
          </button>
        </>
      )}
    </div>
  );
}

/** In place of the table's rows: a message and the one action that helps (load again, clear the filters). */
function TableMessage({ text, actionLabel, onAction }: { text: string; actionLabel: string; onAction: () => void }) {
  return (
    <div className="flex flex-col items-center gap-4 py-16 text-center">
      <p className="text-slate-300">{text}</p>
      <button type="button" className={buttonStyles.secondary} onClick={onAction}>
        {actionLabel}
      </button>
    </div>
  );
}
