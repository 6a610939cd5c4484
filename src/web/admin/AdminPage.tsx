import { lazy, Suspense, useCallback, useEffect, useMemo, useState } from 'react';
import { filterFromSearchParams, type WaitlistFilter } from '../../shared/admin/waitlist-filter.js';
import { roleRights, type AdminRole } from '../../shared/admin/roles.js';
import { siteContent } from '../../shared/site/content.js';
import { PAGES } from '../../shared/site/pages.js';
import { LogoMark } from '../site/Logo.js';
import { PageFrame } from '../site/PageFrame.js';
import { Link } from '../site/router.js';
import { buttonStyles, LoadingSpinner, SpinnerIcon } from '../ui/controls.js';
import { preloadableLazy } from '../ui/preloadable-lazy.js';
import { AccountPanel, RequiredEnrolment } from './account/AccountPanel.js';
import { useAdminAccess } from './common/useAdminAccess.js';
import { useAdminSession } from './common/useAdminSession.js';
import { useInsightsStart } from './insights/useInsightsStart.js';
import { MailPanel } from './mail/MailPanel.js';
import { useMailStatus } from './mail/useMailStatus.js';
import { dropPrefetchedFirstPage, prefetchFirstPage } from './waitlist/first-page-prefetch.js';
import { patchFilter, useFilterParams } from './waitlist/useFilterParams.js';
import { WaitlistPanel } from './waitlist/WaitlistPanel.js';
import { ListsBar } from './lists/ListsBar.js';
import type { ListView } from '../../shared/admin/lists-api.js';
import { amountBands, parseBandKey } from '../../shared/lists/contract.js';

// The insight panel carries the chart: its own chunk, so the table's first rows do not wait for it.
// Its download starts with this module's, so it is usually in by the time the session is checked
// and the panel renders without suspending (see preloadableLazy).
const InsightPanel = preloadableLazy(() => import('./insights/InsightPanel.js'));
void InsightPanel.preload();
// The API keys area: its own chunk, asked for when the dashboard renders.
const ApiKeysPanel = lazy(() => import('./api-keys/ApiKeysPanel.js'));

// The Records area (issue 30) and its diff library: a chunk of their own, fetched when the dashboard renders.
const RecordsPanel = lazy(() => import('./records/RecordsPanel.js'));
// The webhooks area: its own chunk, loaded when the dashboard renders it (below the fold).
const WebhooksPanel = preloadableLazy(() => import('./webhooks/WebhooksPanel.js'));

/** The table's first page is asked for as soon as the stored session allows, from the address's filter. */
function prefetchTable(): void {
  prefetchFirstPage(filterFromSearchParams(new URLSearchParams(window.location.search)));
}

/**
 * /admin: the waitlist panel, shown once a session is confirmed. Its areas: the waitlist (table,
 * filters, actions, live updates), the insight panel, the e-mail area, the records (admins), the API keys and webhooks (owners) and the admin's own account;
 * what several of them use is in ./common.
 */
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
  return <AdminDashboard email={session.email} role={session.role} />;
}

function AdminDashboard({ email, role }: { email: string; role: AdminRole }) {
  const { onAccessError, enrolmentRequired, onEnrolled, signOut, signingOut } = useAdminAccess();
  // What the page offers this role; the server refuses the rest whatever the page shows.
  const rights = roleRights(role);

  // The e-mail status: Invite Selected needs it, the e-mail area shows it. Its own load failure
  // shows in that area; a refused session is handled like any admin call's.
  const onMailError = useCallback((error: unknown) => void onAccessError(error), [onAccessError]);
  const mail = useMailStatus(onMailError);
  const mailEnabled = mail.state.status === 'ready' ? mail.state.mail.enabled : null;

  // The view's filter lives in the address; the table and the insight panel both follow it.
  const [filter, setFilter] = useFilterParams();
  const onFilterPatch = useCallback((patch: Partial<WaitlistFilter>) => setFilter(patchFilter(filter, patch)), [filter, setFilter]);
  // The list shown (issue 31): a filter change keeps it; choosing another list starts its view unfiltered.
  const onFilterChange = useCallback((next: WaitlistFilter) => setFilter({ ...next, ...(filter.list ? { list: filter.list } : {}) }), [filter.list, setFilter]);
  const onListChange = useCallback((slug: string | undefined) => setFilter(slug ? { list: slug } : {}), [setFilter]);
  const [lists, setLists] = useState<ListView[]>([]);
  const chosenList = filter.list ? lists.find((l) => l.slug === filter.list) : undefined;
  const amountLabel = useMemo(() => {
    if (!filter.list) return undefined;
    const bands = amountBands(chosenList?.bands ?? null);
    return (key: string | null | undefined) => (key ? (bands.find((b) => b.key === key) ?? parseBandKey(key))?.label ?? key : '');
  }, [filter.list, chosenList]);
  const insights = useInsightsStart();

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
            <button type="button" className={buttonStyles.secondary} onClick={() => void signOut()} disabled={signingOut}>
              {signingOut && <SpinnerIcon />}
              Sign Out
            </button>
          </div>
        </div>
      </header>
      <main className="mx-auto w-full max-w-6xl flex-1 px-5 py-8 sm:px-8 sm:py-12">
        {enrolmentRequired ? (
          <RequiredEnrolment onEnrolled={onEnrolled} />
        ) : (
          <>
            <ListsBar list={filter.list} onListChange={onListChange} onLists={setLists} canEdit={rights.deleteEntries} onAccessError={onAccessError} />
            <WaitlistPanel
              filter={filter}
              onFilterChange={onFilterChange}
              amountLabel={amountLabel}
              onAccessError={onAccessError}
              mailEnabled={mailEnabled}
              rights={rights}
              onMailChanged={mail.refresh}
              onLiveUpdate={insights.onLiveUpdate}
              onFirstPageSettled={insights.onFirstPageSettled}
              onFirstPage={insights.onFirstPage}
            />
            {insights.tableStarted && (
              <Suspense fallback={null}>
                <InsightPanel filter={filter} liveVersion={insights.liveVersion} onAccessError={onAccessError} onFilter={onFilterPatch} />
              </Suspense>
            )}
            <MailPanel mail={mail} showOutbox={rights.outbox} onAccessError={onAccessError} />
            <Suspense fallback={null}>
              {rights.records && <RecordsPanel onAccessError={onAccessError} />}
              {rights.manageTeam && <ApiKeysPanel onAccessError={onAccessError} />}
              {rights.manageTeam && <WebhooksPanel onAccessError={onAccessError} />}
            </Suspense>
            <AccountPanel email={email} role={role} onAccessError={onAccessError} />
          </>
        )}
      </main>
    </PageFrame>
  );
}
