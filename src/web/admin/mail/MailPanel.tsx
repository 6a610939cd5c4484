import { useId } from 'react';
import type { MailStatus, OutboxStatus } from '../../../shared/admin/mail-api.js';
import { cardStyles } from '../../ui/styles.js';
import { CardLoadFailed, CardLoading } from '../common/CardStatus.js';
import { mailTexts } from './copy.js';
import { Outbox } from './Outbox.js';
import type { UseMailStatus } from './useMailStatus.js';

/**
 * The e-mail area of /admin (issue 9), beside the specification's panels: whether e-mail is on,
 * the outbox's counts, and its messages (newest first, filtered by status, paged with "Load
 * more"), where failed ones show their reason and can be queued again.
 */
export function MailPanel({
  mail,
  showOutbox,
  onAccessError,
}: {
  mail: UseMailStatus;
  /** The outbox's messages carry addresses: a viewer sees the settings and counts only. */
  showOutbox: boolean;
  onAccessError: (error: unknown) => boolean;
}) {
  const headingId = useId();
  const { state } = mail;
  return (
    <section aria-labelledby={headingId} className="mt-8">
      <h2 id={headingId} className="text-xl font-bold tracking-tight text-white">
        {mailTexts.heading}
      </h2>
      <div className={`${cardStyles} mt-4 p-5 sm:p-6`}>
        {state.status === 'loading' && <CardLoading label={mailTexts.loading} />}
        {state.status === 'failed' && <CardLoadFailed text={mailTexts.loadFailed} retryLabel={mailTexts.tryAgain} onRetry={mail.reload} />}
        {state.status === 'ready' && !state.mail.enabled && <MailOff />}
        {state.status === 'ready' && state.mail.enabled && (
          <>
            <MailSummary mail={state.mail} />
            {showOutbox ? (
              <Outbox counts={state.mail.counts} version={mail.version} onChanged={mail.refresh} onAccessError={onAccessError} />
            ) : (
              <p className="mt-4 text-sm text-slate-400">{mailTexts.outboxForAdmins}</p>
            )}
          </>
        )}
      </div>
    </section>
  );
}

/** The notice without SMTP_URL; its words are mailTexts.off, the variable names set as code. */
function MailOff() {
  return (
    <div className="flex items-start gap-4">
      <span aria-hidden="true" className="flex size-10 shrink-0 items-center justify-center rounded-xl bg-amber-400/10 text-amber-200 ring-1 ring-amber-300/30">
        <svg viewBox="0 0 24 24" className="size-5" fill="none" stroke="currentColor" strokeWidth="1.8" strokeLinecap="round" strokeLinejoin="round">
          <path d="M4 6h16v12H4z" />
          <path d="m4 7 8 6 8-6" />
          <path d="M3 3l18 18" />
        </svg>
      </span>
      <p className="text-sm leading-relaxed text-slate-300">
        {withCode(mailTexts.off)}
      </p>
    </div>
  );
}

/** Sets the environment variable names of a text in <code>, leaving its words as they are. */
function withCode(text: string) {
  return text.split(/(SMTP_URL|MAIL_FROM|PUBLIC_URL)/).map((part, i) =>
    i % 2 === 1 ? (
      <code key={i} className="rounded bg-white/10 px-1 py-0.5 font-mono text-[0.8125rem] text-slate-100">
        {part}
      </code>
    ) : (
      part
    ),
  );
}

const countStyles: Record<OutboxStatus, string> = {
  queued: 'text-white',
  sending: 'text-white',
  sent: 'text-emerald-300',
  failed: 'text-rose-300',
};

function MailSummary({ mail }: { mail: MailStatus }) {
  const confirmation = mailTexts.confirmation;
  return (
    <div>
      <dl className="grid grid-cols-1 gap-y-2 text-sm sm:flex sm:flex-wrap sm:gap-x-6 sm:gap-y-1">
        <div className="min-w-0 sm:flex sm:gap-1.5">
          <dt className="whitespace-nowrap text-slate-400">{mailTexts.sender}</dt>
          <dd className="min-w-0 text-slate-100 [overflow-wrap:anywhere]">{mail.from}</dd>
        </div>
        <div className="sm:flex sm:gap-1.5">
          <dt className="whitespace-nowrap text-slate-400">{confirmation.label}</dt>
          <dd className="text-slate-100">{mail.confirmation === 'required' ? confirmation.required : confirmation.off}</dd>
        </div>
      </dl>
      <dl className="mt-4 grid grid-cols-2 gap-3 sm:grid-cols-4">
        {(['queued', 'sending', 'sent', 'failed'] as const).map((status) => (
          <div key={status} className="rounded-xl border border-white/10 bg-white/[0.03] px-4 py-3">
            <dt className="text-xs font-semibold tracking-wide text-slate-400 uppercase">{mailTexts.counts[status]}</dt>
            <dd className={`mt-1 text-2xl font-bold tabular-nums ${mail.counts[status] > 0 ? countStyles[status] : 'text-slate-300'}`}>
              {mail.counts[status].toLocaleString('en-US')}
            </dd>
          </div>
        ))}
      </dl>
    </div>
  );
}
