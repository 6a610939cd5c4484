import { useCallback, useEffect, useId, useRef, useState } from 'react';
import { ADMIN_ROLES, ROLE_LABELS, roleOfUser, type AdminRole } from '../../../shared/admin/roles.js';
import type { TeamMember } from '../../../shared/admin/team-api.js';
import { getAuthClient } from '../../session/auth-client.js';
import { notifyError, notifySuccess } from '../../site/toast.js';
import { buttonStyles, SpinnerIcon } from '../../ui/controls.js';
import { cardStyles } from '../../ui/styles.js';
import { CardLoadFailed, CardLoading } from '../common/CardStatus.js';
import { isAbort } from '../common/admin-api.js';
import { accountTexts, accountToasts } from './copy.js';
import { fetchTeam, setTeamRole } from './team-api.js';

/**
 * The admin's role (issue 32 point 4), and for an owner the Team: every admin with a role that can
 * be changed. What the page shows follows the session's token; the server checks the database's
 * role on every request either way.
 */

const when = (iso: string) => new Date(iso).toLocaleDateString('en-US', { month: 'short', day: 'numeric', year: 'numeric' });

/**
 * The signed-in admin's role and what it allows. On show it asks the server (GET /user) for the role
 * as it is now; when that differs from the token's (changed since the last refresh), the session is
 * refreshed, so the whole page follows.
 */
export function RoleCard({ role, headingClassName }: { role: AdminRole; headingClassName: string }) {
  const texts = accountTexts.role;
  const headingId = useId();
  useEffect(() => {
    let active = true;
    const auth = getAuthClient();
    auth
      .getUser()
      .then(({ data }) => {
        if (active && data.user && roleOfUser(data.user) !== role) void auth.refreshSession().catch(() => undefined);
      })
      .catch(() => undefined);
    return () => {
      active = false;
    };
  }, [role]);
  return (
    <section aria-labelledby={headingId} className={`${cardStyles} p-5 sm:p-6`}>
      <h3 id={headingId} className={headingClassName}>
        {texts.heading}
      </h3>
      <dl className="mt-4 flex items-center gap-3">
        <dt className="text-sm text-slate-400">{texts.label}</dt>
        <dd className="rounded-full bg-emerald-400/15 px-3 py-1 text-sm font-semibold text-emerald-300">{ROLE_LABELS[role]}</dd>
      </dl>
      <p className="mt-3 text-sm text-slate-300">{texts.rights[role]}</p>
    </section>
  );
}

type TeamState = { status: 'loading' } | { status: 'failed' } | { status: 'ready'; admins: TeamMember[] };

/** The owner's Team: each admin's e-mail, last sign-in and role, changed with a select and a button. */
export function TeamCard({ headingClassName, onAccessError }: { headingClassName: string; onAccessError: (error: unknown) => boolean }) {
  const texts = accountTexts.team;
  const [state, setState] = useState<TeamState>({ status: 'loading' });
  const [attempt, setAttempt] = useState(0);
  const [busy, setBusy] = useState<string | null>(null);
  /** The role picked in each row, before it is saved. */
  const [picked, setPicked] = useState<Record<string, AdminRole>>({});
  const headingRef = useRef<HTMLHeadingElement>(null);
  const headingId = useId();

  useEffect(() => {
    const controller = new AbortController();
    fetchTeam(controller.signal)
      .then((admins) => setState({ status: 'ready', admins }))
      .catch((error: unknown) => {
        if (isAbort(error)) return;
        setState({ status: 'failed' });
        if (!onAccessError(error)) notifyError(accountToasts.error(error instanceof Error ? error.message : texts.loadFailed));
      });
    return () => controller.abort();
  }, [attempt, onAccessError, texts.loadFailed]);

  const reload = useCallback(() => {
    setState({ status: 'loading' });
    setAttempt((n) => n + 1);
  }, []);

  async function change(member: TeamMember) {
    const role = picked[member.id] ?? member.role;
    if (busy || role === member.role) return;
    setBusy(member.id);
    try {
      const changed = await setTeamRole(member.id, role);
      setState((previous) =>
        previous.status === 'ready' ? { status: 'ready', admins: previous.admins.map((a) => (a.id === changed.id ? changed : a)) } : previous,
      );
      notifySuccess(accountToasts.roleChanged(changed.email, ROLE_LABELS[changed.role].toLowerCase()));
      // An owner who stepped down: the token follows, and the page with it.
      if (changed.you)
        await getAuthClient()
          .refreshSession()
          .catch(() => undefined);
    } catch (error) {
      if (!onAccessError(error)) notifyError(accountToasts.error(error instanceof Error ? error.message : texts.loadFailed));
    } finally {
      setBusy(null);
    }
  }

  return (
    <section aria-labelledby={headingId} aria-busy={state.status === 'loading' || busy !== null} className={`${cardStyles} p-5 sm:p-6 lg:col-span-2`}>
      <h3 id={headingId} ref={headingRef} tabIndex={-1} className={headingClassName}>
        {texts.heading}
      </h3>
      <p className="mt-2 text-sm text-slate-300">{texts.intro}</p>
      <div className="mt-4">
        {state.status === 'loading' && <CardLoading label={texts.loading} />}
        {state.status === 'failed' && <CardLoadFailed text={texts.loadFailed} retryLabel={texts.retry} onRetry={reload} />}
        {state.status === 'ready' && (
          <ul className="divide-y divide-white/10 rounded-xl border border-white/10" aria-label={texts.heading}>
            {state.admins.map((member) => {
              const value = picked[member.id] ?? member.role;
              const selectId = `${headingId}-${member.id}`;
              return (
                <li key={member.id} className="flex flex-col gap-3 p-4 sm:flex-row sm:items-center sm:justify-between">
                  <div className="min-w-0">
                    <p className="flex flex-wrap items-center gap-2 font-medium text-white">
                      <span className="break-all">{member.email}</span>
                      {member.you && <span className="rounded-full bg-emerald-400/15 px-2 py-0.5 text-xs font-semibold text-emerald-300">{texts.you}</span>}
                    </p>
                    <p className="mt-1 text-sm text-slate-400">
                      {texts.lastSignIn}: {member.last_sign_in_at ? when(member.last_sign_in_at) : texts.never}
                    </p>
                  </div>
                  <div className="flex shrink-0 items-center gap-2">
                    <label htmlFor={selectId} className="sr-only">
                      {texts.roleLabel(member.email)}
                    </label>
                    <select
                      id={selectId}
                      className="h-10 rounded-xl border border-white/15 bg-slate-950/60 px-3 text-sm text-white"
                      value={value}
                      disabled={busy !== null}
                      onChange={(event) => setPicked((p) => ({ ...p, [member.id]: event.target.value as AdminRole }))}
                    >
                      {ADMIN_ROLES.map((role) => (
                        <option key={role} value={role}>
                          {ROLE_LABELS[role]}
                        </option>
                      ))}
                    </select>
                    <button
                      type="button"
                      className={buttonStyles.secondary}
                      aria-label={texts.changeLabel(member.email)}
                      disabled={busy !== null || value === member.role}
                      onClick={() => void change(member)}
                    >
                      {busy === member.id && <SpinnerIcon />}
                      {busy === member.id ? texts.changing : texts.change}
                    </button>
                  </div>
                </li>
              );
            })}
          </ul>
        )}
      </div>
    </section>
  );
}
