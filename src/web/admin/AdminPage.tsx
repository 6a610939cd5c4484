import { useCallback, useId, useMemo, useRef, useState } from 'react';
import type { MouseEvent } from 'react';
import { Link, useNavigate } from '../site/router.js';
import { ADMIN_MAX_IDS, EXPORT_FILE_NAMES, MAIL_DISABLED_CODE, type InviteResult } from '../../shared/admin/waitlist-api.js';
import { countCsvRows } from '../../shared/csv.js';
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
import { AccountPanel, RequiredEnrolment } from './AccountPanel.js';
import { AdminApiError, deleteWaitlistEntries, exportWaitlist, inviteWaitlistEntries, isInsufficientAal, isUnauthorized } from './admin-api.js';
import { adminToasts, countLine, inviteTexts, mailTexts, type InviteCounts } from './copy.js';
import { DeleteDialog } from './DeleteDialog.js';
import { isInvitable, shownStatusOnly } from './entry-status.js';
import { downloadBlob } from './download.js';
import { InviteDialog } from './InviteDialog.js';
import { MailPanel } from './MailPanel.js';
import { useSelection } from './selection.js';
import { useAdminSession } from './useAdminSession.js';
import { useMailStatus } from './useMailStatus.js';
import { useWaitlist } from './useWaitlist.js';
import { WaitlistTable } from './WaitlistTable.js';

/** /admin: the waitlist panel, shown once a session is confirmed. */
export default function AdminPage() {
  const session = useAdminSession();
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
    if (data.session) notifyError(adminToasts.sessionExpired);
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
      notifyError(adminToasts.signOutFailed(authErrorMessage(error)));
      return;
    }
    notifySuccess(adminToasts.signedOut);
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
            <WaitlistPanel onAccessError={onAccessError} mailEnabled={mailEnabled} onMailChanged={mail.refresh} />
            <MailPanel mail={mail} onAccessError={onAccessError} />
            <AccountPanel email={email} onAccessError={onAccessError} />
          </>
        )}
      </main>
    </PageFrame>
  );
}

interface WaitlistPanelProps {
  onAccessError: (error: unknown) => boolean;
  /** E-mail on (true), off (false) or not known yet (null): Invite Selected needs it on. */
  mailEnabled: boolean | null;
  /** Invites were queued (or e-mail turned out off): the e-mail area reloads. */
  onMailChanged: () => void;
}

function WaitlistPanel({ onAccessError, mailEnabled, onMailChanged }: WaitlistPanelProps) {
  const { selection, version } = useSelection();
  const [dialogOpen, setDialogOpen] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const [inviteOpen, setInviteOpen] = useState(false);
  const [inviting, setInviting] = useState(false);
  /** What the invite dialog says: how many of the selection the table shows as invitable. */
  const [inviteCounts, setInviteCounts] = useState({ invitable: 0, selected: 0 });
  const inviteButtonRef = useRef<HTMLButtonElement>(null);
  const mailOffId = useId();
  const [exporting, setExporting] = useState<'all' | 'selected' | null>(null);
  const headingRef = useRef<HTMLHeadingElement>(null);
  const deleteButtonRef = useRef<HTMLButtonElement>(null);

  const onLoadError = useCallback(
    (error: unknown) => {
      if (!onAccessError(error)) notifyError(adminToasts.loadFailed);
    },
    [onAccessError],
  );
  const { entries, total, phase, retry, removeEntries, markInvited, invitedAt, invitedVersion, reload } = useWaitlist(onLoadError);

  const selectedCount = selection.size;
  const summary = useMemo(() => countLine(total, selectedCount), [total, selectedCount]);
  const hasEntries = entries.length > 0;

  const toggleAll = useCallback(() => {
    if (entries.length > 0 && selection.size >= entries.length) selection.clear();
    else selection.setAll(entries.map((entry) => entry.id));
  }, [entries, selection]);

  function openDelete(event: MouseEvent<HTMLButtonElement>) {
    if (selection.size === 0) {
      event.preventDefault();
      notifyError(adminToasts.noSelectionDelete);
    }
  }

  async function confirmDelete() {
    const ids = selection.toArray();
    if (ids.length === 0) {
      setDialogOpen(false);
      notifyError(adminToasts.noSelectionDelete);
      return;
    }
    setDeleting(true);
    let deleted: WaitlistEntry[] = [];
    try {
      // The API takes at most ADMIN_MAX_IDS ids per request; larger selections go in several.
      for (let start = 0; start < ids.length; start += ADMIN_MAX_IDS) {
        const result = await deleteWaitlistEntries(ids.slice(start, start + ADMIN_MAX_IDS));
        deleted = deleted.concat(result.deleted);
      }
      removeEntries(deleted.map((entry) => entry.id));
      selection.clear();
      notifySuccess(adminToasts.deleted(deleted.length));
    } catch (error) {
      if (deleted.length > 0) {
        const gone = deleted.map((entry) => entry.id);
        removeEntries(gone);
        selection.remove(gone);
      }
      if (!onAccessError(error)) notifyError(adminToasts.deleteFailed(authErrorMessage(error)));
    } finally {
      setDeleting(false);
      setDialogOpen(false);
    }
  }

  function openInvite(event: MouseEvent<HTMLButtonElement>) {
    if (mailEnabled === false) {
      event.preventDefault();
      notifyError(adminToasts.mailOff(mailTexts.off));
      return;
    }
    if (selection.size === 0) {
      event.preventDefault();
      notifyError(adminToasts.noSelectionInvite);
      return;
    }
    setInviteCounts({ invitable: expectedInvite().invitable.size, selected: selection.size });
  }

  /**
   * What the table says an invite of the selection will do: the selected rows it shows as joined
   * or confirmed, and the others by status. One pass over the loaded rows (the selection holds
   * only loaded ones).
   */
  function expectedInvite(): { invitable: Set<string>; counts: InviteCounts } {
    const invitable = new Set<string>();
    const counts: InviteCounts = { invited: 0, skipped: { pending: 0, unsubscribed: 0, alreadyInvited: 0 } };
    for (const entry of entries) {
      if (!selection.has(entry.id)) continue;
      const status = shownStatusOnly(entry, invitedAt(entry.id));
      if (isInvitable(status)) invitable.add(entry.id);
      else if (status === 'pending') counts.skipped.pending += 1;
      else if (status === 'unsubscribed') counts.skipped.unsubscribed += 1;
      else counts.skipped.alreadyInvited += 1;
    }
    counts.invited = invitable.size;
    return { invitable, counts };
  }

  async function confirmInvite() {
    const ids = selection.toArray();
    if (ids.length === 0) {
      setInviteOpen(false);
      notifyError(adminToasts.noSelectionInvite);
      return;
    }
    setInviting(true);
    const expected = expectedInvite();
    const done: InviteCounts = { invited: 0, skipped: { pending: 0, unsubscribed: 0, alreadyInvited: 0 } };
    const add = (chunk: string[], result: InviteResult) => {
      done.invited += result.invited;
      done.skipped.pending += result.skipped.pending;
      done.skipped.unsubscribed += result.skipped.unsubscribed;
      done.skipped.alreadyInvited += result.skipped.alreadyInvited;
      // The server does not list whom it invited (see the contract): the rows the table showed
      // as joined or confirmed are the ones, unless the counts below say otherwise.
      markInvited(
        chunk.filter((id) => expected.invitable.has(id)),
        result.invitedAt,
      );
    };
    try {
      // At most ADMIN_MAX_IDS ids per request (each one transaction); larger selections go in several.
      for (let start = 0; start < ids.length; start += ADMIN_MAX_IDS) {
        const chunk = ids.slice(start, start + ADMIN_MAX_IDS);
        add(chunk, await inviteWaitlistEntries(chunk));
      }
      selection.clear();
      notifySuccess(adminToasts.invited(done));
      // Someone changed these people since the table loaded them (confirmed, unsubscribed, invited
      // from another tab): the table reloads to show what the server has.
      if (!sameCounts(done, expected.counts)) reload();
    } catch (error) {
      if (!onAccessError(error)) notifyError(adminToasts.inviteFailed(error instanceof AdminApiError && error.code === MAIL_DISABLED_CODE ? mailTexts.off : authErrorMessage(error)));
    } finally {
      setInviting(false);
      setInviteOpen(false);
      onMailChanged();
    }
  }

  async function runExport(kind: 'all' | 'selected') {
    const ids = kind === 'selected' ? selection.toArray() : undefined;
    if (ids && ids.length === 0) {
      notifyError(adminToasts.noSelectionExport);
      return;
    }
    if (ids && ids.length > ADMIN_MAX_IDS) {
      notifyError(adminToasts.exportTooMany(ADMIN_MAX_IDS));
      return;
    }
    setExporting(kind);
    try {
      const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
      const file = await exportWaitlist({ ...(ids ? { ids } : {}), ...(timeZone ? { timeZone } : {}) });
      const rows = countCsvRows(await file.blob.text());
      downloadBlob(file.blob, file.fileName ?? EXPORT_FILE_NAMES[kind]);
      notifySuccess(adminToasts.exported(rows, kind));
    } catch (error) {
      if (!onAccessError(error)) notifyError(adminToasts.exportFailed(authErrorMessage(error)));
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

  return (
    <section aria-labelledby="waitlist-heading" className={`${cardStyles} p-5 sm:p-6`}>
      <div className="flex flex-col gap-4 lg:flex-row lg:items-end lg:justify-between">
        <div>
          <h1 id="waitlist-heading" ref={headingRef} tabIndex={-1} className="text-2xl font-bold tracking-tight text-white outline-none">
            Waitlist
          </h1>
          {phase !== 'loading' && <p className="mt-1 text-sm text-slate-300">{summary}</p>}
        </div>
        {hasEntries && (
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
            <button
              type="button"
              className={buttonStyles.primary}
              disabled={exporting !== null}
              onClick={() => void runExport('all')}
            >
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
                  disabled={!mailOff && (selectedCount === 0 || inviting)}
                  aria-disabled={mailOff || undefined}
                  aria-describedby={mailOff ? mailOffId : undefined}
                  title={mailOff ? mailTexts.off : undefined}
                  onClick={openInvite}
                >
                  {inviting && <SpinnerIcon />}
                  {inviteTexts.button}
                </button>
              }
            />
            {mailOff && (
              <span id={mailOffId} hidden>
                {mailTexts.off}
              </span>
            )}
          </div>
        )}
      </div>

      <div className="mt-6">
        {phase === 'loading' ? (
          <LoadingSpinner />
        ) : !hasEntries && phase === 'failed' ? (
          <div className="flex flex-col items-center gap-4 py-16 text-center">
            <p className="text-slate-300">The waitlist could not be loaded.</p>
            <button type="button" className={buttonStyles.secondary} onClick={retry}>
              Try again
            </button>
          </div>
        ) : !hasEntries ? (
          <p className="py-16 text-center text-slate-300">No waitlist entries yet.</p>
        ) : (
          <WaitlistTable
            entries={entries}
            selection={selection}
            selectionVersion={version}
            onToggleAll={toggleAll}
            invitedAt={invitedAt}
            invitedVersion={invitedVersion}
          />
        )}
        {hasEntries && <LoadProgress phase={phase} loaded={entries.length} total={total} onRetry={retry} />}
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

/** Background loading progress under the table (not a role=status: the page spinner owns 'Loading'). */
function LoadProgress({ phase, loaded, total, onRetry }: { phase: string; loaded: number; total: number; onRetry: () => void }) {
  return (
    <div aria-live="polite" className="mt-3 flex min-h-6 flex-wrap items-center gap-x-3 gap-y-1 text-xs text-slate-400">
      {phase === 'loading-more' && (
        <>
          <SpinnerIcon className="size-3" />
          <span>
            Loading more… {loaded} of {total} loaded
          </span>
        </>
      )}
      {phase === 'failed' && (
        <>
          <span className="text-slate-300">
            Showing {loaded} of {total} entries: loading stopped.
          </span>
          <button type="button" className={buttonStyles.link} onClick={onRetry}>
            Try again
          </button>
        </>
      )}
    </div>
  );
}
