import { useEffect, useId, useRef, useState } from 'react';
import type { FormEvent } from 'react';
import { getAuthClient } from '../session/auth-client.js';
import { isCompleteCode, verifyTotpCode } from '../session/mfa.js';
import { notifyError } from '../site/toast.js';
import { buttonColors, buttonSizes, buttonStyles, SpinnerIcon } from '../ui/controls.js';
import { OneTimeCodeField } from '../ui/OneTimeCodeField.js';
import { useRefocusAfterBusy } from '../ui/useRefocusAfterBusy.js';

export const codeStepTexts = {
  heading: 'Two-factor authentication',
  hint: 'Enter the 6-digit code from your authenticator app.',
  label: 'Authentication code',
  submit: 'Verify',
  busy: 'Verifying...',
  incomplete: 'Enter the 6 digits your authenticator app shows.',
  switchAccount: 'Sign in with another account',
} as const;

export interface CodeStepProps {
  factorId: string;
  /** The code was accepted: the session is aal2 now. */
  onVerified: () => void;
  /** The admin gave up on this session (signed out locally): back to the password step. */
  onCancelled: () => void;
}

/** The second step of /auth for an admin with a verified TOTP factor: one 6-digit code, errors as toasts. */
export function CodeStep({ factorId, onVerified, onCancelled }: CodeStepProps) {
  const [code, setCode] = useState('');
  const [busy, setBusy] = useState(false);
  const [leaving, setLeaving] = useState(false);
  const codeRef = useRef<HTMLInputElement>(null);
  const requestRefocus = useRefocusAfterBusy(busy, codeRef, 'select');
  const headingId = useId();

  // The step replaces the password form: focus moves to its one field.
  useEffect(() => codeRef.current?.focus(), []);

  async function handleSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (busy) return;
    if (!isCompleteCode(code)) {
      notifyError({ title: 'Error', description: codeStepTexts.incomplete });
      codeRef.current?.focus();
      return;
    }
    setBusy(true);
    const message = await verifyTotpCode(factorId, code);
    if (message === null) {
      onVerified();
      return;
    }
    notifyError({ title: 'Error', description: message });
    setCode('');
    requestRefocus();
    setBusy(false);
  }

  async function switchAccount() {
    setLeaving(true);
    // 'local' revokes this half-signed-in session only, not the admin's sessions elsewhere.
    await getAuthClient()
      .signOut({ scope: 'local' })
      .catch(() => undefined);
    onCancelled();
  }

  return (
    <section aria-labelledby={headingId} className="mt-6">
      <h2 id={headingId} className="text-lg font-semibold text-white">
        {codeStepTexts.heading}
      </h2>
      <form className="mt-4 space-y-5" onSubmit={(event) => void handleSubmit(event)} aria-busy={busy} noValidate>
        <OneTimeCodeField label={codeStepTexts.label} hint={codeStepTexts.hint} value={code} onChange={setCode} disabled={busy} inputRef={codeRef} />
        <button type="submit" disabled={busy || leaving} className={`${buttonColors.primary} ${buttonSizes.lg} w-full`}>
          {busy ? codeStepTexts.busy : codeStepTexts.submit}
        </button>
      </form>
      <p className="mt-4 text-center">
        <button type="button" className={buttonStyles.link} onClick={() => void switchAccount()} disabled={busy || leaving}>
          {leaving && <SpinnerIcon className="mr-2 inline-block size-3 align-middle" />}
          {codeStepTexts.switchAccount}
        </button>
      </p>
    </section>
  );
}
