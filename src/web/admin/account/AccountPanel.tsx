import { useCallback, useEffect, useId, useRef, useState } from 'react';
import type { Factor } from '@supabase/auth-js';
import { authErrorMessage, getAuthClient } from '../../session/auth-client.js';
import { verifiedTotpFactor } from '../../session/mfa.js';
import { notifyError, notifySuccess } from '../../site/toast.js';
import { ConfirmDialog } from '../../ui/ConfirmDialog.js';
import { buttonStyles } from '../../ui/controls.js';
import { cardStyles } from '../../ui/styles.js';
import { accountTexts, accountToasts } from './copy.js';
import { CardLoadFailed, CardLoading } from '../common/CardStatus.js';
import { ChangePasswordForm } from './ChangePasswordForm.js';
import { SessionsCard } from './SessionsCard.js';
import { TotpEnrolment } from './TotpEnrolment.js';
import { RoleCard, TeamCard } from './TeamCards.js';
import type { AdminRole } from '../../../shared/admin/roles.js';

const cardHeadingStyles = 'text-lg font-semibold text-white outline-none';

/**
 * The admin's own account, beside the waitlist panel: the role (and, for an owner, the team), the
 * second factor, the password and the sessions. `onAccessError` handles the admin API's refusals
 * of the session itself (401, aal, role).
 */
export function AccountPanel({ email, role, onAccessError }: { email: string; role: AdminRole; onAccessError: (error: unknown) => boolean }) {
  const headingId = useId();
  return (
    <section aria-labelledby={headingId} className="mt-8">
      <h2 id={headingId} className="text-xl font-bold tracking-tight text-white">
        {accountTexts.heading}
      </h2>
      <div className="mt-4 grid items-start gap-6 lg:grid-cols-2">
        <RoleCard role={role} headingClassName={cardHeadingStyles} />
        <TwoFactorCard />
        <section aria-labelledby={`${headingId}-password`} className={`${cardStyles} p-5 sm:p-6`}>
          <h3 id={`${headingId}-password`} className={cardHeadingStyles}>
            {accountTexts.password.heading}
          </h3>
          <ChangePasswordForm email={email} />
        </section>
        <SessionsCard headingClassName={cardHeadingStyles} onAccessError={onAccessError} />
        {role === 'owner' && <TeamCard headingClassName={cardHeadingStyles} onAccessError={onAccessError} />}
      </div>
    </section>
  );
}

/** `ADMIN_MFA=required` and no factor yet: the admin API refuses everything else, so this is all /admin shows. */
export function RequiredEnrolment({ onEnrolled }: { onEnrolled: () => void }) {
  const headingRef = useRef<HTMLHeadingElement>(null);
  useEffect(() => headingRef.current?.focus(), []);
  return (
    <section aria-labelledby="mfa-required-heading" className={`${cardStyles} mx-auto max-w-xl p-5 sm:p-8`}>
      <h1 id="mfa-required-heading" ref={headingRef} tabIndex={-1} className="text-2xl font-bold tracking-tight text-white outline-none">
        {accountTexts.required.heading}
      </h1>
      <p className="mt-2 text-sm text-slate-300">{accountTexts.required.text}</p>
      <div className="mt-6">
        <TotpEnrolment onEnrolled={onEnrolled} />
      </div>
    </section>
  );
}

type FactorState = { status: 'loading' } | { status: 'failed' } | { status: 'off' } | { status: 'on'; factor: Factor };

const addedOn = (iso: string) => new Date(iso).toLocaleDateString('en-US', { month: 'short', day: 'numeric', year: 'numeric' });

function TwoFactorCard() {
  const texts = accountTexts.twoFactor;
  const [state, setState] = useState<FactorState>({ status: 'loading' });
  const [attempt, setAttempt] = useState(0);
  const [dialogOpen, setDialogOpen] = useState(false);
  const [removing, setRemoving] = useState(false);
  const headingRef = useRef<HTMLHeadingElement>(null);
  const removeRef = useRef<HTMLButtonElement>(null);
  /** After an enrolment the set-up controls are gone: focus goes to the card's heading. */
  const focusHeading = useRef(false);
  const headingId = useId();

  useEffect(() => {
    let active = true;
    verifiedTotpFactor()
      .then((factor) => {
        if (active) setState(factor ? { status: 'on', factor } : { status: 'off' });
      })
      .catch(() => {
        if (active) setState({ status: 'failed' });
      });
    return () => {
      active = false;
    };
  }, [attempt]);

  useEffect(() => {
    if (state.status !== 'loading' && focusHeading.current) {
      focusHeading.current = false;
      headingRef.current?.focus();
    }
  }, [state]);

  const reload = useCallback(() => {
    setState({ status: 'loading' });
    setAttempt((n) => n + 1);
  }, []);

  const onEnrolled = useCallback(() => {
    focusHeading.current = true;
    reload();
  }, [reload]);

  async function confirmRemove(factorId: string) {
    setRemoving(true);
    const auth = getAuthClient();
    const { error } = await auth.mfa.unenroll({ factorId }).catch((thrown: unknown) => ({ error: thrown }));
    if (error) {
      notifyError(accountToasts.error(authErrorMessage(error)));
    } else {
      // The token still says aal2: a refresh brings it (and the stored user's factors) up to date.
      await auth.refreshSession().catch(() => undefined);
      notifySuccess(accountToasts.removed);
      setState({ status: 'off' });
    }
    setRemoving(false);
    setDialogOpen(false);
  }

  /** The Remove button is gone once the factor is: focus then goes to the card's heading. */
  const onDialogCloseAutoFocus = useCallback((event: Event) => {
    event.preventDefault();
    (removeRef.current ?? headingRef.current)?.focus();
  }, []);

  return (
    <section aria-labelledby={headingId} className={`${cardStyles} p-5 sm:p-6`}>
      <h3 id={headingId} ref={headingRef} tabIndex={-1} className={cardHeadingStyles}>
        {texts.heading}
      </h3>
      <div className="mt-4">
        {/* Named apart from the waitlist's 'Loading' spinner, which tests and screen readers tell apart. */}
        {state.status === 'loading' && <CardLoading label={texts.loading} />}
        {state.status === 'failed' && <CardLoadFailed text={texts.loadFailed} retryLabel={texts.retry} onRetry={reload} />}
        {state.status === 'off' && (
          <div className="space-y-4">
            <p className="text-sm text-slate-300">{texts.off}</p>
            <TotpEnrolment onEnrolled={onEnrolled} />
          </div>
        )}
        {state.status === 'on' && (
          <div className="space-y-4">
            <p className="text-sm text-slate-300">{texts.on(addedOn(state.factor.created_at))}</p>
            <ConfirmDialog
              open={dialogOpen}
              onOpenChange={setDialogOpen}
              title={texts.removeTitle}
              description={texts.removeText}
              confirmLabel={texts.remove}
              busy={removing}
              onConfirm={() => void confirmRemove(state.factor.id)}
              onCloseAutoFocus={onDialogCloseAutoFocus}
              trigger={
                <button ref={removeRef} type="button" className={buttonStyles.danger}>
                  {texts.remove}
                </button>
              }
            />
          </div>
        )}
      </div>
    </section>
  );
}
