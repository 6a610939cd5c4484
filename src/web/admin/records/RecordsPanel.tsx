import { useCallback, useEffect, useId, useMemo, useState, type FormEvent } from 'react';
import { isRecordDay, RECORD_KINDS, type RecordVersion, type RecordVersionList, type RecordVersionSummary } from '../../../shared/admin/records-api.js';
import { notifyError } from '../../site/toast.js';
import { buttonStyles, SpinnerIcon } from '../../ui/controls.js';
import { LabelledInput } from '../../ui/LabelledInput.js';
import { cardStyles, inputStyles } from '../../ui/styles.js';
import { isAbort } from '../common/admin-api.js';
import { CardLoadFailed, CardLoading } from '../common/CardStatus.js';
import { formatUtc, recordsTexts, versionLabel } from './copy.js';
import { downloadRecordsBundle, fetchRecordVersion, fetchRecordVersions } from './records-api.js';
import { VersionDiff } from './VersionDiff.js';

/**
 * The Records area of /admin (issue 30), loaded on its own (AdminPage imports it lazily): the kept
 * versions of every text by kind, two versions of one text side by side with their differences,
 * and the examiner's bundle of a period.
 */
type State = { status: 'loading' } | { status: 'failed' } | { status: 'ready'; list: RecordVersionList };

const utcDay = (date: Date) => date.toISOString().slice(0, 10);

export default function RecordsPanel({ onAccessError }: { onAccessError: (error: unknown) => boolean }) {
  const headingId = useId();
  const [state, setState] = useState<State>({ status: 'loading' });
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    const abort = new AbortController();
    fetchRecordVersions(abort.signal).then(
      (list) => setState({ status: 'ready', list }),
      (error: unknown) => {
        if (isAbort(error) || onAccessError(error)) return;
        setState({ status: 'failed' });
      },
    );
    return () => abort.abort();
  }, [attempt, onAccessError]);

  const reload = useCallback(() => {
    setState({ status: 'loading' });
    setAttempt((n) => n + 1);
  }, []);

  return (
    <section aria-labelledby={headingId} className="mt-8">
      <h2 id={headingId} className="text-xl font-bold tracking-tight text-white">
        {recordsTexts.heading}
      </h2>
      <div className={`${cardStyles} mt-4 space-y-8 p-5 sm:p-6`}>
        {state.status === 'loading' && <CardLoading label={recordsTexts.loading} />}
        {state.status === 'failed' && <CardLoadFailed text={recordsTexts.loadFailed} retryLabel={recordsTexts.tryAgain} onRetry={reload} />}
        {state.status === 'ready' && (
          <>
            <p className="text-sm text-slate-300">{recordsTexts.intro(state.list.retentionYears)}</p>
            <BundleForm onAccessError={onAccessError} />
            <CompareForm versions={state.list.versions} onAccessError={onAccessError} />
            {RECORD_KINDS.map((kind) => (
              <VersionTable key={kind} title={recordsTexts.kinds[kind]} versions={state.list.versions.filter((v) => v.kind === kind)} />
            ))}
          </>
        )}
      </div>
    </section>
  );
}

function BundleForm({ onAccessError }: { onAccessError: (error: unknown) => boolean }) {
  const headingId = useId();
  const today = new Date();
  const [from, setFrom] = useState(() => utcDay(new Date(today.getTime() - 30 * 24 * 3600 * 1000)));
  const [to, setTo] = useState(() => utcDay(today));
  const [busy, setBusy] = useState(false);
  const texts = recordsTexts.bundle;

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (!isRecordDay(from) || !isRecordDay(to) || from > to) {
      notifyError({ title: texts.failed, description: texts.badPeriod });
      return;
    }
    setBusy(true);
    try {
      await downloadRecordsBundle({ from, to });
    } catch (error) {
      if (!onAccessError(error)) notifyError({ title: texts.failed, description: error instanceof Error ? error.message : String(error) });
    } finally {
      setBusy(false);
    }
  }

  return (
    <form aria-labelledby={headingId} onSubmit={(e) => void submit(e)}>
      <h3 id={headingId} className="text-base font-semibold text-white">
        {texts.heading}
      </h3>
      <div className="mt-3 flex flex-wrap items-end gap-4">
        <LabelledInput label={texts.from} type="date" value={from} onChange={(e) => setFrom(e.target.value)} required className={`${inputStyles} sm:w-48`} />
        <LabelledInput label={texts.to} type="date" value={to} onChange={(e) => setTo(e.target.value)} required className={`${inputStyles} sm:w-48`} />
        <button type="submit" className={`${buttonStyles.primary} h-12`} disabled={busy}>
          {busy && <SpinnerIcon />}
          {busy ? texts.busy : texts.button}
        </button>
      </div>
    </form>
  );
}

const keyOf = (v: Pick<RecordVersionSummary, 'kind' | 'name'>) => `${v.kind}/${v.name}`;

function CompareForm({ versions, onAccessError }: { versions: RecordVersionSummary[]; onAccessError: (error: unknown) => boolean }) {
  const headingId = useId();
  const ids = { text: useId(), left: useId(), right: useId() };
  const texts = recordsTexts.compare;
  // Texts with at least two versions, and their versions oldest first.
  const byText = useMemo(() => {
    const map = new Map<string, RecordVersionSummary[]>();
    for (const v of versions) map.set(keyOf(v), [...(map.get(keyOf(v)) ?? []), v]);
    return new Map([...map].filter(([, list]) => list.length > 1));
  }, [versions]);
  const [text, setText] = useState(() => [...byText.keys()][0] ?? '');
  const choices = byText.get(text) ?? [];
  const [leftId, setLeftId] = useState(() => choices.at(-2)?.id ?? '');
  const [rightId, setRightId] = useState(() => choices.at(-1)?.id ?? '');
  const [busy, setBusy] = useState(false);
  const [shown, setShown] = useState<{ older: RecordVersion; newer: RecordVersion } | null>(null);

  function chooseText(next: string) {
    const list = byText.get(next) ?? [];
    setText(next);
    setLeftId(list.at(-2)?.id ?? '');
    setRightId(list.at(-1)?.id ?? '');
    setShown(null);
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    try {
      const [a, b] = await Promise.all([fetchRecordVersion(leftId), fetchRecordVersion(rightId)]);
      setShown(a.number <= b.number ? { older: a, newer: b } : { older: b, newer: a });
    } catch (error) {
      if (!onAccessError(error)) notifyError({ title: texts.failed, description: error instanceof Error ? error.message : String(error) });
    } finally {
      setBusy(false);
    }
  }

  const select = `${inputStyles} sm:w-auto`;
  return (
    <form aria-labelledby={headingId} onSubmit={(e) => void submit(e)}>
      <h3 id={headingId} className="text-base font-semibold text-white">
        {texts.heading}
      </h3>
      {byText.size === 0 ? (
        <p className="mt-2 text-sm text-slate-400">{texts.onlyOne}</p>
      ) : (
        <div className="mt-3 flex flex-wrap items-end gap-4">
          <div>
            <label htmlFor={ids.text} className="mb-2 block text-sm font-medium text-slate-200">
              {texts.text}
            </label>
            <select id={ids.text} className={select} value={text} onChange={(e) => chooseText(e.target.value)}>
              {[...byText.keys()].map((key) => (
                <option key={key} value={key}>
                  {key}
                </option>
              ))}
            </select>
          </div>
          {(
            [
              [ids.left, texts.left, leftId, setLeftId],
              [ids.right, texts.right, rightId, setRightId],
            ] as const
          ).map(([id, label, value, set]) => (
            <div key={id}>
              <label htmlFor={id} className="mb-2 block text-sm font-medium text-slate-200">
                {label}
              </label>
              <select id={id} className={select} value={value} onChange={(e) => set(e.target.value)}>
                {choices.map((v) => (
                  <option key={v.id} value={v.id}>
                    {versionLabel(v)}
                  </option>
                ))}
              </select>
            </div>
          ))}
          <button type="submit" className={`${buttonStyles.secondary} h-12`} disabled={busy || !leftId || !rightId}>
            {busy && <SpinnerIcon />}
            {busy ? texts.busy : texts.button}
          </button>
        </div>
      )}
      {shown && <VersionDiff older={shown.older} newer={shown.newer} />}
    </form>
  );
}

function VersionTable({ title, versions }: { title: string; versions: RecordVersionSummary[] }) {
  const columns = recordsTexts.columns;
  if (versions.length === 0) return null;
  return (
    <div>
      <h3 className="text-base font-semibold text-white">{title}</h3>
      {/* Focusable, so a keyboard can scroll it sideways on a narrow screen. */}
      <div className="mt-3 overflow-x-auto" tabIndex={0} role="region" aria-label={`${title}: table`}>
        <table className="w-full min-w-[40rem] text-left text-sm">
          <caption className="sr-only">{title}</caption>
          <thead className="text-xs tracking-wide text-slate-400 uppercase">
            <tr>
              <th scope="col" className="py-2 pr-4 font-semibold">
                {columns.version}
              </th>
              <th scope="col" className="py-2 pr-4 font-semibold">
                {columns.hash}
              </th>
              <th scope="col" className="py-2 pr-4 font-semibold">
                {columns.firstUsed}
              </th>
              <th scope="col" className="py-2 pr-4 font-semibold">
                {columns.lastUsed}
              </th>
              <th scope="col" className="py-2 text-right font-semibold">
                {columns.uses}
              </th>
            </tr>
          </thead>
          <tbody className="divide-y divide-white/5 text-slate-200">
            {versions.map((v) => (
              <tr key={v.id}>
                <th scope="row" className="py-2 pr-4 font-medium text-white">
                  {v.name} <span className="text-slate-400">v{v.number}</span>
                </th>
                <td className="py-2 pr-4 font-mono text-xs text-slate-300" title={v.hash}>
                  {v.hash.slice(0, 16)}
                </td>
                <td className="py-2 pr-4 whitespace-nowrap">{formatUtc(v.firstUsedAt)}</td>
                <td className="py-2 pr-4 whitespace-nowrap">{formatUtc(v.lastUsedAt)}</td>
                <td className="py-2 text-right tabular-nums">{v.useCount.toLocaleString('en-US')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
