import { useCallback, useEffect, useId, useRef, useState } from 'react';
import type { Checkbox } from 'radix-ui';
import { OUTBOX_DEFAULT_PAGE_SIZE, type MailStatus, type OutboxMessageView, type OutboxStatus } from '../../../shared/admin/mail-api.js';
import { formatDateJoined } from '../../../shared/waitlist/display.js';
import { notifyError, notifySuccess } from '../../site/toast.js';
import { buttonColors, buttonStyles, SpinnerIcon } from '../../ui/controls.js';
import { isAbort } from '../common/admin-api.js';
import { CardLoadFailed, CardLoading } from '../common/CardStatus.js';
import { RowCheckbox } from '../common/RowCheckbox.js';
import { mailTexts, mailToasts } from './copy.js';
import { fetchOutboxPage, retryOutboxMessages } from './mail-api.js';

type Filter = 'all' | 'queued' | 'sent' | 'failed';
const FILTERS: Filter[] = ['all', 'queued', 'sent', 'failed'];

interface OutboxState {
  messages: OutboxMessageView[];
  nextCursor: string | null;
  /** loading: first page (spinner); more: "Load more" running; failed: the first page failed. */
  phase: 'loading' | 'ready' | 'more' | 'failed';
}

export interface OutboxProps {
  counts: MailStatus['counts'];
  /** Changes when the counts are refreshed: the list reloads with them. */
  version: number;
  /** An action changed the outbox: refresh the counts (and with them the list). */
  onChanged: () => void;
  onAccessError: (error: unknown) => boolean;
}

/** The outbox's messages, newest first, filtered by status and paged; failed ones can be queued again. */
export function Outbox({ counts, version, onChanged, onAccessError }: OutboxProps) {
  const [filter, setFilter] = useState<Filter>('all');
  const [list, setList] = useState<OutboxState>({ messages: [], nextCursor: null, phase: 'loading' });
  const [attempt, setAttempt] = useState(0);
  const [selected, setSelected] = useState<ReadonlySet<string>>(() => new Set());
  /** The message being retried, 'selected', or null. */
  const [busy, setBusy] = useState<string | null>(null);
  const headingRef = useRef<HTMLHeadingElement>(null);
  const headingId = useId();
  const loadMoreAbort = useRef<AbortController | null>(null);

  const status = filter === 'all' ? undefined : filter;

  useEffect(() => {
    const controller = new AbortController();
    loadMoreAbort.current?.abort();
    fetchOutboxPage({ limit: OUTBOX_DEFAULT_PAGE_SIZE, ...(status ? { status } : {}) }, controller.signal)
      .then((page) => {
        setList({ messages: page.messages, nextCursor: page.nextCursor, phase: 'ready' });
        // Keep ticks only on failed messages still shown.
        setSelected((previous) => {
          const failed = new Set(page.messages.filter((m) => m.status === 'failed').map((m) => m.id));
          return new Set([...previous].filter((id) => failed.has(id)));
        });
      })
      .catch((error: unknown) => {
        if (isAbort(error)) return;
        setList((previous) => ({ ...previous, phase: 'failed' }));
        if (!onAccessError(error)) notifyError(mailToasts.loadFailed(error instanceof Error ? error.message : mailTexts.outboxFailed));
      });
    return () => controller.abort();
  }, [status, version, attempt, onAccessError]);

  function changeFilter(next: Filter) {
    if (next === filter) return;
    setList({ messages: [], nextCursor: null, phase: 'loading' });
    setSelected(new Set());
    setFilter(next);
  }

  const reload = useCallback(() => {
    setList({ messages: [], nextCursor: null, phase: 'loading' });
    setAttempt((n) => n + 1);
  }, []);

  async function loadMore() {
    const cursor = list.nextCursor;
    if (!cursor || list.phase !== 'ready') return;
    const controller = new AbortController();
    loadMoreAbort.current = controller;
    setList((previous) => ({ ...previous, phase: 'more' }));
    try {
      const page = await fetchOutboxPage({ limit: OUTBOX_DEFAULT_PAGE_SIZE, cursor, ...(status ? { status } : {}) }, controller.signal);
      setList((previous) => ({ messages: previous.messages.concat(page.messages), nextCursor: page.nextCursor, phase: 'ready' }));
    } catch (error) {
      if (isAbort(error)) return;
      setList((previous) => ({ ...previous, phase: 'ready' }));
      if (!onAccessError(error)) notifyError(mailToasts.loadFailed(error instanceof Error ? error.message : mailTexts.outboxFailed));
    }
  }

  async function retry(ids: string[], which: string) {
    if (busy || ids.length === 0) return;
    setBusy(which);
    try {
      const retried = await retryOutboxMessages(ids);
      notifySuccess(mailToasts.retried(retried));
      const gone = new Set(ids);
      // Shown at once; the refresh that follows brings the server's view of them.
      setList((previous) => ({
        ...previous,
        messages:
          filter === 'failed'
            ? previous.messages.filter((m) => !gone.has(m.id))
            : previous.messages.map((m) => (gone.has(m.id) && m.status === 'failed' ? { ...m, status: 'queued', attempts: 0 } : m)),
      }));
      setSelected((previous) => new Set([...previous].filter((id) => !gone.has(id))));
      // The pressed button is gone: focus goes to the outbox heading.
      headingRef.current?.focus();
      onChanged();
    } catch (error) {
      if (!onAccessError(error)) notifyError(mailToasts.retryFailed(error instanceof Error ? error.message : String(error)));
    } finally {
      setBusy(null);
    }
  }

  const onRetryOne = (id: string) => void retry([id], id);
  const failedShown = list.messages.filter((m) => m.status === 'failed');
  const allFailedSelected = failedShown.length > 0 && failedShown.every((m) => selected.has(m.id));
  const headerState: Checkbox.CheckedState = allFailedSelected ? true : selected.size > 0 ? 'indeterminate' : false;
  const toggleAll = () => setSelected(allFailedSelected ? new Set() : new Set(failedShown.map((m) => m.id)));
  const toggleOne = (id: string, checked: boolean) =>
    setSelected((previous) => {
      const next = new Set(previous);
      if (checked) next.add(id);
      else next.delete(id);
      return next;
    });

  const filterCount = (f: Filter) => (f === 'all' ? null : f === 'queued' ? counts.queued + counts.sending : counts[f]);

  return (
    <section aria-labelledby={headingId} aria-busy={list.phase === 'loading' || list.phase === 'more' || busy !== null} className="mt-8 border-t border-white/10 pt-6">
      <div className="flex flex-col gap-4 lg:flex-row lg:items-center lg:justify-between">
        <h3 id={headingId} ref={headingRef} tabIndex={-1} className="text-lg font-semibold text-white outline-none">
          {mailTexts.outbox}
        </h3>
        <div className="flex flex-wrap items-center gap-3">
          <div role="group" aria-label={mailTexts.filterLabel} className="inline-flex rounded-xl border border-white/10 bg-white/[0.03] p-1">
            {FILTERS.map((f) => {
              const count = filterCount(f);
              return (
                <button
                  key={f}
                  type="button"
                  aria-pressed={filter === f}
                  onClick={() => changeFilter(f)}
                  className="inline-flex h-8 items-center gap-1.5 rounded-lg px-3 text-sm font-medium text-slate-300 transition-colors hover:text-white aria-pressed:bg-white/10 aria-pressed:text-white"
                >
                  {mailTexts.filters[f]}
                  {count !== null && <span className="text-xs text-slate-400 tabular-nums">{count.toLocaleString('en-US')}</span>}
                </button>
              );
            })}
          </div>
          {selected.size > 0 && (
            <button
              type="button"
              className={buttonStyles.secondary}
              disabled={busy !== null}
              onClick={() => void retry([...selected], 'selected')}
            >
              {busy === 'selected' && <SpinnerIcon />}
              {mailTexts.retrySelected(selected.size)}
            </button>
          )}
        </div>
      </div>

      <div className="mt-4">
        {list.phase === 'loading' && <CardLoading label={mailTexts.outboxLoading} />}
        {list.phase === 'failed' && list.messages.length === 0 && (
          <CardLoadFailed text={mailTexts.outboxFailed} retryLabel={mailTexts.tryAgain} onRetry={reload} />
        )}
        {list.phase !== 'loading' && list.messages.length === 0 && list.phase !== 'failed' && (
          <p className="rounded-xl border border-dashed border-white/10 py-10 text-center text-sm text-slate-400">
            {mailTexts.empty[filter]}
          </p>
        )}
        {list.messages.length > 0 && (
          <>
            {/* Narrow screens: one card per message, so the reason and Retry are never scrolled away. */}
            <ul aria-label={mailTexts.outboxMessages} className="divide-y divide-white/10 rounded-xl border border-white/10 bg-ink/40 lg:hidden">
              {list.messages.map((message) => (
                <OutboxItem key={message.id} message={message} selected={selected.has(message.id)} onToggle={toggleOne} busy={busy} onRetry={onRetryOne} />
              ))}
            </ul>
            <div
              role="region"
              aria-label={mailTexts.outboxMessages}
              tabIndex={0}
              className="hidden max-h-[min(32rem,70vh)] overflow-auto overscroll-contain rounded-xl border border-white/10 bg-ink/40 lg:block"
            >
              <table className="w-full table-fixed border-separate border-spacing-0 text-left text-sm">
                <colgroup>
                  {failedShown.length > 0 && <col className="w-12" />}
                  <col className="w-[21%]" />
                  <col className="w-[23%]" />
                  <col className="w-28" />
                  <col className="w-44" />
                  <col />
                </colgroup>
                <thead>
                  <tr>
                    {failedShown.length > 0 && (
                      <th scope="col" className={headerCell}>
                        <span className="flex items-center">
                          <RowCheckbox checked={headerState} onCheckedChange={toggleAll} label={mailTexts.selectAll} />
                        </span>
                      </th>
                    )}
                    <th scope="col" className={headerCell}>{mailTexts.columns.to}</th>
                    <th scope="col" className={headerCell}>{mailTexts.columns.subject}</th>
                    <th scope="col" className={headerCell}>{mailTexts.columns.status}</th>
                    <th scope="col" className={headerCell}>{mailTexts.columns.time}</th>
                    <th scope="col" className={headerCell}>{mailTexts.columns.reason}</th>
                  </tr>
                </thead>
                <tbody>
                  {list.messages.map((message) => (
                    <OutboxRow
                      key={message.id}
                      message={message}
                      checkboxColumn={failedShown.length > 0}
                      selected={selected.has(message.id)}
                      onToggle={toggleOne}
                      busy={busy}
                      onRetry={onRetryOne}
                    />
                  ))}
                </tbody>
              </table>
            </div>
            <div aria-live="polite" className="mt-3 flex min-h-10 flex-wrap items-center justify-between gap-3 text-xs text-slate-400">
              <span>{mailTexts.showing(list.messages.length)}</span>
              {list.nextCursor && (
                <button type="button" className={buttonStyles.secondary} disabled={list.phase === 'more'} onClick={() => void loadMore()}>
                  {list.phase === 'more' && <SpinnerIcon />}
                  {mailTexts.loadMore}
                </button>
              )}
            </div>
          </>
        )}
      </div>
    </section>
  );
}

const headerCell =
  'sticky top-0 z-10 h-11 border-b border-white/10 bg-slate-900 px-3 text-xs font-semibold tracking-wide text-slate-300 uppercase';
const bodyCell = 'border-b border-white/5 px-3 py-3 align-top';

const messageBadge: Record<OutboxStatus, string> = {
  queued: 'bg-slate-400/10 text-slate-200 ring-slate-300/25',
  sending: 'bg-sky-400/10 text-sky-200 ring-sky-300/30',
  sent: 'bg-emerald-400/10 text-emerald-200 ring-emerald-300/30',
  failed: 'bg-rose-400/10 text-rose-200 ring-rose-300/30',
};

interface OutboxRowProps {
  message: OutboxMessageView;
  selected: boolean;
  onToggle: (id: string, checked: boolean) => void;
  busy: string | null;
  onRetry: (id: string) => void;
}

/** What a message's time shows: when it was sent, when its next try is due, or when it was queued. */
function messageTime(message: OutboxMessageView): { label: string; at: string } {
  if (message.status === 'sent' && message.sentAt) return { label: mailTexts.times.sent, at: message.sentAt };
  if (message.status === 'queued' && message.attempts > 0) return { label: mailTexts.times.retry, at: message.nextAttemptAt };
  return { label: mailTexts.times.queued, at: message.createdAt };
}

function StatusPill({ status }: { status: OutboxStatus }) {
  return (
    <span className={`inline-flex items-center rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset ${messageBadge[status]}`}>
      {mailTexts.statuses[status]}
    </span>
  );
}

function MessageCheckbox({ message, selected, onToggle }: Pick<OutboxRowProps, 'message' | 'selected' | 'onToggle'>) {
  return (
    <span className="flex items-center">
      <RowCheckbox checked={selected} onCheckedChange={(checked) => onToggle(message.id, checked === true)} label={mailTexts.selectRow(message.to)} />
    </span>
  );
}

/** The last error (failed: the reason, in red; queued: the temporary failure being retried), or a dash. */
function LastError({ message }: { message: OutboxMessageView }) {
  const failed = message.status === 'failed';
  if (message.lastError) {
    return (
      <p className={`line-clamp-3 text-xs leading-relaxed break-words ${failed ? 'text-rose-200' : 'text-amber-200'}`} title={message.lastError}>
        {message.lastError}
      </p>
    );
  }
  if (failed) return <p className="text-xs text-slate-400">{mailTexts.noReason}</p>;
  return (
    <span className="text-xs text-slate-400" aria-hidden="true">
      —
    </span>
  );
}

function RetryButton({ message, busy, onRetry }: Pick<OutboxRowProps, 'message' | 'busy' | 'onRetry'>) {
  return (
    <button
      type="button"
      className={`${buttonColors.secondary} h-8 px-3 text-xs`}
      aria-label={mailTexts.retryLabel(message.to)}
      disabled={busy !== null}
      onClick={() => onRetry(message.id)}
    >
      {busy === message.id && <SpinnerIcon className="size-3" />}
      {mailTexts.retry}
    </button>
  );
}

function OutboxRow({ message, checkboxColumn, selected, onToggle, busy, onRetry }: OutboxRowProps & { checkboxColumn: boolean }) {
  const failed = message.status === 'failed';
  const time = messageTime(message);
  return (
    <tr className={selected ? 'bg-emerald-400/10' : 'hover:bg-white/[0.03]'}>
      {checkboxColumn && <td className={`${bodyCell} align-middle`}>{failed && <MessageCheckbox message={message} selected={selected} onToggle={onToggle} />}</td>}
      <td className={`${bodyCell} truncate font-medium text-slate-100`} title={message.to}>
        {message.to}
      </td>
      <td className={bodyCell}>
        <span className="block truncate text-slate-200" title={message.subject}>
          {message.subject}
        </span>
        <span className="text-xs text-slate-400">{mailTexts.kinds[message.kind] ?? message.kind}</span>
      </td>
      <td className={bodyCell}>
        <StatusPill status={message.status} />
        <span className="mt-1 block text-xs text-slate-400">{mailTexts.tries(message.attempts)}</span>
      </td>
      <td className={`${bodyCell} text-slate-300`}>
        <span className="block text-xs text-slate-400">{time.label}</span>
        <time dateTime={time.at} className="whitespace-nowrap">
          {formatDateJoined(time.at)}
        </time>
      </td>
      <td className={bodyCell}>
        <LastError message={message} />
        {failed && (
          <div className="mt-2">
            <RetryButton message={message} busy={busy} onRetry={onRetry} />
          </div>
        )}
      </td>
    </tr>
  );
}

/** A message as a card, for narrow screens. */
function OutboxItem({ message, selected, onToggle, busy, onRetry }: OutboxRowProps) {
  const failed = message.status === 'failed';
  const time = messageTime(message);
  return (
    <li className={`flex gap-3 p-4 ${selected ? 'bg-emerald-400/10' : ''}`}>
      {failed && (
        <div className="pt-0.5">
          <MessageCheckbox message={message} selected={selected} onToggle={onToggle} />
        </div>
      )}
      <div className="min-w-0 flex-1 space-y-1.5">
        <div className="flex flex-wrap items-center justify-between gap-x-3 gap-y-1">
          <p className="min-w-0 font-medium break-all text-slate-100">{message.to}</p>
          <StatusPill status={message.status} />
        </div>
        <p className="truncate text-sm text-slate-200" title={message.subject}>
          {message.subject}
        </p>
        <p className="text-xs text-slate-400">
          {mailTexts.kinds[message.kind] ?? message.kind} · {mailTexts.tries(message.attempts)} · {time.label}{' '}
          <time dateTime={time.at}>{formatDateJoined(time.at)}</time>
        </p>
        {(message.lastError || failed) && <LastError message={message} />}
        {failed && (
          <div className="pt-1">
            <RetryButton message={message} busy={busy} onRetry={onRetry} />
          </div>
        )}
      </div>
    </li>
  );
}
