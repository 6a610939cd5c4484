import { useCallback, useEffect, useId, useRef, useState, type FormEvent } from 'react';
import type { CreatedWebhook, WebhookEventType, WebhookList } from '../../../shared/admin/webhooks-api.js';
import { notifyError, notifySuccess } from '../../site/toast.js';
import { buttonStyles, SpinnerIcon } from '../../ui/controls.js';
import { LabelledInput } from '../../ui/LabelledInput.js';
import { cardStyles } from '../../ui/styles.js';
import { isAbort } from '../common/admin-api.js';
import { CardLoadFailed, CardLoading } from '../common/CardStatus.js';
import { webhookTexts as texts } from './copy.js';
import { EndpointCard } from './EndpointCard.js';
import { createWebhook, fetchWebhooks } from './webhooks-api.js';

type State = { status: 'loading' } | { status: 'failed' } | { status: 'ready'; list: WebhookList };

/**
 * The webhooks area of /admin (its own lazily loaded chunk): the endpoints, each with its recent
 * deliveries (replayable), enable/disable, secret rotation and removal, and the form that adds one,
 * whose secret is shown once.
 */
export default function WebhooksPanel({ onAccessError }: { onAccessError: (error: unknown) => boolean }) {
  const headingId = useId();
  const [state, setState] = useState<State>({ status: 'loading' });
  const [secret, setSecret] = useState<CreatedWebhook | null>(null);
  const [version, setVersion] = useState(0);
  const reload = useCallback(() => setVersion((v) => v + 1), []);
  /** A failed call: the session's problem is handled by the page, anything else is a toast. */
  const onError = useCallback(
    (error: unknown) => {
      if (!onAccessError(error)) notifyError({ title: texts.failed, description: error instanceof Error ? error.message : String(error) });
    },
    [onAccessError],
  );

  useEffect(() => {
    const controller = new AbortController();
    fetchWebhooks(controller.signal).then(
      (list) => setState({ status: 'ready', list }),
      (error: unknown) => {
        if (isAbort(error)) return;
        if (!onAccessError(error)) setState({ status: 'failed' });
      },
    );
    return () => controller.abort();
  }, [version, onAccessError]);

  const onSecret = useCallback(
    (created: CreatedWebhook) => {
      setSecret(created);
      reload();
    },
    [reload],
  );

  return (
    <section aria-labelledby={headingId} className="mt-8">
      <h2 id={headingId} className="text-xl font-bold tracking-tight text-white">
        {texts.heading}
      </h2>
      <p className="mt-1 text-sm text-slate-400">{texts.intro}</p>
      <div className={`${cardStyles} mt-4 space-y-6 p-5 sm:p-6`}>
        {state.status === 'loading' && <CardLoading label={texts.loading} />}
        {state.status === 'failed' && <CardLoadFailed text={texts.loadFailed} retryLabel={texts.tryAgain} onRetry={reload} />}
        {state.status === 'ready' && (
          <>
            {secret && <SecretOnce created={secret} onDone={() => setSecret(null)} />}
            {state.list.endpoints.length === 0 ? (
              <p className="text-sm text-slate-300">{texts.none}</p>
            ) : (
              <ul className="space-y-4">
                {state.list.endpoints.map((endpoint) => (
                  <li key={endpoint.id}>
                    <EndpointCard endpoint={endpoint} onChanged={reload} onSecret={onSecret} onError={onError} />
                  </li>
                ))}
              </ul>
            )}
            {state.list.endpoints.length >= state.list.maxEndpoints ? (
              <p className="text-sm text-slate-300">{texts.add.full(state.list.maxEndpoints)}</p>
            ) : (
              <AddEndpoint eventTypes={state.list.eventTypes} onAdded={onSecret} onError={onError} />
            )}
          </>
        )}
      </div>
    </section>
  );
}

function AddEndpoint({ eventTypes, onAdded, onError }: { eventTypes: string[]; onAdded: (created: CreatedWebhook) => void; onError: (error: unknown) => void }) {
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const hintId = useId();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    try {
      const created = await createWebhook({ url, ...(events.length > 0 ? { events: events as WebhookEventType[] } : {}) });
      notifySuccess({ title: texts.done.added });
      setUrl('');
      setEvents([]);
      onAdded(created);
    } catch (error) {
      onError(error);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={(e) => void submit(e)} className="space-y-4 border-t border-white/10 pt-6">
      <h3 className="text-base font-semibold text-white">{texts.add.legend}</h3>
      <LabelledInput label={texts.add.url} hint={texts.add.urlHint} type="url" required value={url} onChange={(e) => setUrl(e.target.value)} placeholder="https://" autoComplete="off" />
      <fieldset aria-describedby={hintId}>
        <legend className="text-sm font-medium text-slate-200">{texts.add.events}</legend>
        <p id={hintId} className="text-sm text-slate-400">
          {texts.add.eventsHint}
        </p>
        <div className="mt-2 flex flex-wrap gap-x-5 gap-y-2">
          {eventTypes.map((type) => (
            <label key={type} className="flex items-center gap-2 text-sm text-slate-200">
              <input
                type="checkbox"
                className="size-4 accent-emerald-400"
                checked={events.includes(type)}
                onChange={(e) => setEvents((now) => (e.target.checked ? [...now, type] : now.filter((t) => t !== type)))}
              />
              <code className="font-mono text-[0.8125rem]">{type}</code>
            </label>
          ))}
        </div>
      </fieldset>
      <button type="submit" className={buttonStyles.primary} disabled={busy}>
        {busy && <SpinnerIcon />}
        {texts.add.submit}
      </button>
    </form>
  );
}

/** The new secret, shown once, focused so a keyboard or screen-reader user lands on it. */
function SecretOnce({ created, onDone }: { created: CreatedWebhook; onDone: () => void }) {
  const ref = useRef<HTMLDivElement>(null);
  const [copied, setCopied] = useState(false);
  const titleId = useId();
  useEffect(() => ref.current?.focus(), [created]);
  return (
    <div ref={ref} tabIndex={-1} role="status" aria-labelledby={titleId} className="rounded-xl border border-emerald-300/30 bg-emerald-400/10 p-4 outline-none focus-visible:ring-2 focus-visible:ring-emerald-300">
      <p id={titleId} className="font-semibold text-white">
        {texts.secret.title} <span className="font-normal text-slate-300">· {created.endpoint.url}</span>
      </p>
      <p className="mt-1 text-sm text-slate-300">{texts.secret.text}</p>
      <code data-testid="webhook-secret" className="mt-3 block rounded bg-black/40 px-3 py-2 font-mono text-sm break-all text-emerald-200">
        {created.secret}
      </code>
      <div className="mt-3 flex gap-2">
        <button
          type="button"
          className={buttonStyles.secondary}
          onClick={() => void navigator.clipboard?.writeText(created.secret).then(() => setCopied(true), () => undefined)}
        >
          {copied ? texts.secret.copied : texts.secret.copy}
        </button>
        <button type="button" className={buttonStyles.secondary} onClick={onDone}>
          {texts.secret.dismiss}
        </button>
      </div>
    </div>
  );
}
