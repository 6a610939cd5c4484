import { useEffect, useId, useRef, useState } from 'react';
import type { FormEvent } from 'react';
import { authErrorMessage, getAuthClient } from '../../session/auth-client.js';
import { isCompleteCode, removeUnverifiedFactors, verifyTotpCode } from '../../session/mfa.js';
import { siteContent } from '../../../shared/site/content.js';
import { notifyError, notifySuccess } from '../../site/toast.js';
import { buttonStyles, SpinnerIcon } from '../../ui/controls.js';
import { OneTimeCodeField } from '../../ui/OneTimeCodeField.js';
import { useRefocusAfterBusy } from '../../ui/useRefocusAfterBusy.js';
import { accountTexts, accountToasts } from './copy.js';
import { qrImageSource } from './qr-image.js';

const texts = accountTexts.twoFactor;

/** A factor enrolled but not confirmed yet: what the authenticator app needs. */
interface PendingFactor {
  factorId: string;
  /** A `data:image/svg+xml` URL of GoTrue's SVG. */
  qrCode: string;
  /** The base32 secret, for apps that cannot scan. */
  secret: string;
}

const groupsOfFour = (secret: string) => secret.match(/.{1,4}/g)?.join(' ') ?? secret;

/**
 * Enrols a TOTP factor with auth-js: `mfa.enroll` gives the QR code and the secret, a code from the
 * app confirms it (`challengeAndVerify`), which makes the factor verified and the session aal2.
 */
export function TotpEnrolment({ onEnrolled }: { onEnrolled: () => void }) {
  const [pending, setPending] = useState<PendingFactor | null>(null);
  const [starting, setStarting] = useState(false);
  const [code, setCode] = useState('');
  const [confirming, setConfirming] = useState(false);
  const startRef = useRef<HTMLButtonElement>(null);
  const scanRef = useRef<HTMLParagraphElement>(null);
  const codeRef = useRef<HTMLInputElement>(null);
  const refocusCode = useRefocusAfterBusy(confirming, codeRef, 'focus');
  const secretLabelId = useId();
  const secretHintId = useId();
  /** Focus follows the step: the instructions once the QR code shows, the start button after Cancel. */
  const focusNext = useRef<'scan' | 'start' | null>(null);

  useEffect(() => {
    const target = focusNext.current === 'scan' ? scanRef.current : focusNext.current === 'start' ? startRef.current : null;
    focusNext.current = null;
    target?.focus();
  }, [pending]);

  async function start() {
    setStarting(true);
    try {
      // A set-up left unconfirmed (another tab, a reload) would clash with the new one's name.
      await removeUnverifiedFactors().catch(() => undefined);
      const { data, error } = await getAuthClient().mfa.enroll({
        factorType: 'totp',
        friendlyName: 'Authenticator app',
        issuer: siteContent.productName,
      });
      if (error) notifyError(accountToasts.error(authErrorMessage(error)));
      else {
        focusNext.current = 'scan';
        setCode('');
        setPending({ factorId: data.id, qrCode: qrImageSource(data.totp.qr_code), secret: data.totp.secret });
      }
    } catch (error) {
      notifyError(accountToasts.error(authErrorMessage(error)));
    } finally {
      setStarting(false);
    }
  }

  async function cancel() {
    if (!pending) return;
    const { factorId } = pending;
    focusNext.current = 'start';
    setPending(null);
    // An unverified factor gives no access; removing it keeps the account tidy (the server purges it anyway).
    await getAuthClient()
      .mfa.unenroll({ factorId })
      .catch(() => undefined);
  }

  async function copySecret(secret: string) {
    try {
      await navigator.clipboard.writeText(secret);
      notifySuccess(accountToasts.copied);
    } catch {
      notifyError(accountToasts.copyFailed);
    }
  }

  async function confirm(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!pending || confirming) return;
    if (!isCompleteCode(code)) {
      notifyError(accountToasts.incompleteCode);
      codeRef.current?.focus();
      return;
    }
    setConfirming(true);
    const message = await verifyTotpCode(pending.factorId, code);
    if (message === null) {
      notifySuccess(accountToasts.enrolled);
      onEnrolled();
      return;
    }
    notifyError(accountToasts.error(message));
    setCode('');
    refocusCode();
    setConfirming(false);
  }

  if (!pending) {
    return (
      <button ref={startRef} type="button" className={buttonStyles.primary} onClick={() => void start()} disabled={starting}>
        {starting && <SpinnerIcon />}
        {starting ? texts.starting : texts.setUp}
      </button>
    );
  }

  return (
    <div className="space-y-5">
      <p ref={scanRef} tabIndex={-1} className="text-sm text-slate-300 outline-none">
        {texts.scan}
      </p>
      {/* The SVG is dark on transparent: a white tile keeps it scannable on the dark page. */}
      <img src={pending.qrCode} alt={texts.qrAlt} width={192} height={192} className="size-48 rounded-xl bg-white p-3" />
      <div role="group" aria-labelledby={secretLabelId} aria-describedby={secretHintId}>
        <p id={secretLabelId} className="mb-1 text-sm font-medium text-slate-200">
          {texts.secretLabel}
        </p>
        <p id={secretHintId} className="mb-2 text-sm text-slate-400">
          {texts.secretHint}
        </p>
        <div className="flex flex-col gap-2 sm:flex-row">
          {/* In groups of four so it wraps on a phone and is easy to type; Copy takes it without the spaces. */}
          <code
            data-testid="totp-secret"
            className="flex min-h-12 flex-1 items-center rounded-xl border border-white/15 bg-slate-950/60 px-4 py-2 font-mono text-sm tracking-wider break-words text-white select-all"
          >
            {groupsOfFour(pending.secret)}
          </code>
          <button type="button" className={`${buttonStyles.secondary} h-12 shrink-0`} onClick={() => void copySecret(pending.secret)}>
            {texts.copy}
          </button>
        </div>
      </div>
      <form className="space-y-4" onSubmit={(event) => void confirm(event)} aria-busy={confirming} noValidate>
        <OneTimeCodeField label={texts.codeLabel} value={code} onChange={setCode} disabled={confirming} inputRef={codeRef} />
        <div className="flex flex-wrap gap-2">
          <button type="submit" className={buttonStyles.primary} disabled={confirming}>
            {confirming && <SpinnerIcon />}
            {confirming ? texts.confirming : texts.confirm}
          </button>
          <button type="button" className={buttonStyles.secondary} onClick={() => void cancel()} disabled={confirming}>
            {texts.cancel}
          </button>
        </div>
      </form>
    </div>
  );
}
