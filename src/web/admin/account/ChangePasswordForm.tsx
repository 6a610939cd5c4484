import { useRef, useState } from 'react';
import type { FormEvent } from 'react';
import { getAuthClient } from '../../session/auth-client.js';
import { passwordErrorMessage } from '../../session/mfa.js';
import { notifyError, notifySuccess } from '../../site/toast.js';
import { buttonStyles, SpinnerIcon } from '../../ui/controls.js';
import { LabelledInput } from '../../ui/LabelledInput.js';
import { useRefocusAfterBusy } from '../../ui/useRefocusAfterBusy.js';
import { accountTexts, accountToasts } from './copy.js';

const texts = accountTexts.password;

type FieldName = 'current' | 'next' | 'confirmation';

const FIELDS: ReadonlyArray<{ name: FieldName; label: string; autoComplete: 'current-password' | 'new-password'; hint?: string }> = [
  { name: 'current', label: texts.current, autoComplete: 'current-password' },
  { name: 'next', label: texts.next, autoComplete: 'new-password', hint: texts.hint },
  { name: 'confirmation', label: texts.confirm, autoComplete: 'new-password' },
];

const EMPTY: Record<FieldName, string> = { current: '', next: '', confirmation: '' };

/**
 * PUT /user through auth-js's `updateUser({ password, current_password })`. GoTrue's refusals
 * (`current_password_invalid`, `weak_password` with its reasons, `same_password`…) show as toasts.
 */
export function ChangePasswordForm({ email }: { email: string }) {
  const [values, setValues] = useState(EMPTY);
  const [busy, setBusy] = useState(false);
  /** ASVS 2.1.12: the admin may see what they typed. One toggle shows or hides all three fields. */
  const [shown, setShown] = useState(false);
  const refs = { current: useRef<HTMLInputElement>(null), next: useRef<HTMLInputElement>(null), confirmation: useRef<HTMLInputElement>(null) };
  /** The field a failed attempt sends focus back to: the current password when that was wrong, else the new one. */
  const [refocusTarget, setRefocusTarget] = useState<'current' | 'next'>('current');
  const refocus = useRefocusAfterBusy(busy, refs[refocusTarget], 'select');

  async function handleSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (busy) return;
    if (values.next !== values.confirmation) {
      notifyError(accountToasts.passwordMismatch);
      refs.next.current?.select();
      return;
    }
    setBusy(true);
    let failure: unknown = null;
    try {
      const { error } = await getAuthClient().updateUser({ password: values.next, current_password: values.current });
      failure = error;
    } catch (error) {
      failure = error ?? new Error();
    }
    if (failure) {
      notifyError(accountToasts.error(passwordErrorMessage(failure)));
      const code = (failure as { code?: unknown }).code;
      setRefocusTarget(code === 'current_password_invalid' || code === 'current_password_required' ? 'current' : 'next');
      refocus();
    } else {
      notifySuccess(accountToasts.passwordChanged);
      setValues(EMPTY);
      setShown(false);
    }
    setBusy(false);
  }

  return (
    <form className="mt-4 space-y-4" onSubmit={(event) => void handleSubmit(event)} aria-busy={busy}>
      {/* For password managers: the account whose password this is. */}
      <input type="text" name="username" autoComplete="username" value={email} readOnly hidden />
      {FIELDS.map(({ name, label, autoComplete, hint }) => (
        <LabelledInput
          key={name}
          label={label}
          hint={hint}
          type={shown ? 'text' : 'password'}
          required
          autoComplete={autoComplete}
          value={values[name]}
          onChange={(event) => {
            const value = event.target.value;
            setValues((previous) => ({ ...previous, [name]: value }));
          }}
          disabled={busy}
          inputRef={refs[name]}
        />
      ))}
      <div className="flex flex-wrap items-center gap-3">
        <button type="submit" className={buttonStyles.primary} disabled={busy}>
          {busy && <SpinnerIcon />}
          {busy ? texts.busy : texts.submit}
        </button>
        <button type="button" className={buttonStyles.secondary} aria-pressed={shown} onClick={() => setShown((value) => !value)}>
          <EyeIcon crossed={shown} />
          {/* A toggle keeps its name; aria-pressed says whether the passwords show (WAI-ARIA APG). */}
          {texts.show}
        </button>
      </div>
    </form>
  );
}

/** A decorative eye (struck through while the passwords show); the button's text names the action. */
function EyeIcon({ crossed }: { crossed: boolean }) {
  return (
    <svg aria-hidden="true" viewBox="0 0 24 24" className="size-4" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" strokeLinejoin="round">
      <path d="M2 12s3.6-7 10-7 10 7 10 7-3.6 7-10 7S2 12 2 12Z" />
      <circle cx="12" cy="12" r="3" />
      {crossed && <path d="M3 3l18 18" />}
    </svg>
  );
}
