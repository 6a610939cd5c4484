import { useId, useRef, useState, type FormEvent } from 'react';
import { useNavigate } from '../site/router.js';
import { PAGES } from '../../shared/site/pages.js';
import { checkWaitlistEmail, MAX_EMAIL_LENGTH } from '../../shared/waitlist/email.js';
import {
  CONSENT_FIELD,
  EMAIL_PROBLEM_CODES,
  HONEYPOT_FIELD,
  SIGNUP_PATH,
  SIGNUP_TOASTS,
  signupErrorToast,
} from '../../shared/waitlist/signup-contract.js';
import { siteContent } from '../../shared/site/content.js';
import { notifyError } from '../site/toast.js';
import { inputStyles } from '../ui/styles.js';
import { useRefocusAfterBusy } from '../ui/useRefocusAfterBusy.js';
import { firstTouchAttribution } from './attribution-capture.js';
import { challengeRequired, startChallenge, usableRun, type ChallengeRun } from './challenge.js';
import { PENDING_SIGNUP_STATE } from './signup-status.js';
import { submitSignup } from './submit-signup.js';
import { useHydrated } from './useHydrated.js';

/**
 * The waitlist form. Without JavaScript it is a plain form post (the server answers with a redirect to
 * /thanks or a static error page); once hydrated, it submits with fetch and reports problems as toasts.
 */
export function WaitlistForm() {
  const { form, helperText, honeypotLabel, consent } = siteContent;
  const navigate = useNavigate();
  const hydrated = useHydrated();
  const [submitting, setSubmitting] = useState(false);
  const inputRef = useRef<HTMLInputElement>(null);
  const consentRef = useRef<HTMLInputElement>(null);
  const requestRefocus = useRefocusAfterBusy(submitting, inputRef);
  const inputId = useId();
  const helperId = useId();
  // SIGNUP_CHALLENGE=proof-of-work only: the proof of work, started when the visitor starts on the form.
  const challengeRef = useRef<ChallengeRun | null>(null);
  const prepareChallenge = () => {
    if (challengeRef.current === null && challengeRequired()) challengeRef.current = startChallenge();
  };

  async function handleSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (submitting) return;
    const formElement = event.currentTarget;
    const input = inputRef.current;
    if (!input) return;

    const email = input.value.trim();
    if (email === '') {
      notifyError(SIGNUP_TOASTS.required);
      input.focus();
      return;
    }
    if (!input.checkValidity()) {
      input.reportValidity();
      return;
    }
    const check = checkWaitlistEmail(email);
    if (!check.ok) {
      notifyError(signupErrorToast(EMAIL_PROBLEM_CODES[check.problem]));
      input.focus();
      return;
    }

    const consentBox = consentRef.current;
    if (consentBox && !consentBox.checked) {
      notifyError(signupErrorToast('consent_required'));
      consentBox.focus();
      return;
    }

    const honeypot = formElement.elements.namedItem(HONEYPOT_FIELD);
    const honeypotValue = honeypot instanceof HTMLInputElement ? honeypot.value : '';

    setSubmitting(true);
    // The proof of work, when asked for: awaited here (the button says Joining...), used once.
    let solution: string | null = null;
    if (challengeRequired()) {
      const run = usableRun(challengeRef.current);
      challengeRef.current = null;
      solution = await run.solution;
    }
    // The visit's first touch, captured when the app started (attribution-capture.ts).
    const outcome = await submitSignup(email, honeypotValue, consentBox?.checked ?? false, firstTouchAttribution(), fetch, solution);
    if (outcome.ok) {
      navigate(PAGES.thanks.path, outcome.pending ? { state: PENDING_SIGNUP_STATE } : undefined);
      return;
    }
    notifyError(outcome.toast);
    requestRefocus();
    setSubmitting(false);
  }

  return (
    <form
      method="post"
      action={SIGNUP_PATH}
      noValidate={hydrated}
      onSubmit={(event) => void handleSubmit(event)}
      aria-busy={submitting}
      className="w-full"
    >
      <label htmlFor={inputId} className="mb-2 block text-left text-sm font-medium text-slate-200">
        {form.label}
      </label>
      <div className="flex flex-col gap-3 sm:flex-row">
        <input
          ref={inputRef}
          id={inputId}
          name="email"
          type="email"
          required
          autoComplete="email"
          inputMode="email"
          spellCheck={false}
          maxLength={MAX_EMAIL_LENGTH}
          placeholder={form.placeholder}
          aria-describedby={helperId}
          onFocus={prepareChallenge}
          disabled={submitting}
          className={`${inputStyles} min-w-0 sm:flex-1`}
        />
        <button
          type="submit"
          disabled={submitting}
          className="h-12 shrink-0 rounded-xl bg-emerald-400 px-6 font-semibold text-slate-950 shadow-lg shadow-emerald-500/20 transition-colors hover:bg-emerald-300 disabled:cursor-wait disabled:opacity-70"
        >
          {submitting ? form.submitting : form.submit}
        </button>
      </div>
      {/* Only when content.ts has a consent text (none by default: the spec's form, unchanged). */}
      {consent.checkbox !== null && (
        <label className="mt-4 flex cursor-pointer items-start gap-3 text-left text-sm text-slate-200">
          <input
            ref={consentRef}
            type="checkbox"
            name={CONSENT_FIELD}
            required
            disabled={submitting}
            className="mt-0.5 size-4 shrink-0 cursor-pointer accent-emerald-400 disabled:cursor-not-allowed"
          />
          <span>{consent.checkbox}</span>
        </label>
      )}
      {/* Honeypot: off-screen, out of the tab order and hidden from assistive technology; only bots fill it. */}
      <div aria-hidden="true" className="absolute -left-[10000px] top-auto size-px overflow-hidden">
        <label>
          {honeypotLabel}
          <input type="text" name={HONEYPOT_FIELD} tabIndex={-1} autoComplete="off" defaultValue="" />
        </label>
      </div>
      <p id={helperId} className="mt-3 text-sm text-slate-300">
        {helperText}
      </p>
    </form>
  );
}
