import { useCallback, useEffect, useId, useState, type FormEvent } from 'react';
import type { ApiKeySummary } from '../../../shared/admin/api-keys-api.js';
import { API_SCOPES, MAX_API_KEY_EXPIRY_DAYS, MAX_API_KEY_NAME_LENGTH, type ApiScope } from '../../../shared/api/scopes.js';
import { buttonStyles, SpinnerIcon } from '../../ui/controls.js';
import { ConfirmDialog } from '../../ui/ConfirmDialog.js';
import { cardStyles, inputStyles } from '../../ui/styles.js';
import { isAbort } from '../common/admin-api.js';
import { CardLoadFailed, CardLoading } from '../common/CardStatus.js';
import { createApiKey, fetchApiKeys, revokeApiKey } from './api-keys-api.js';
import { apiKeyTexts as texts } from './copy.js';

type Load = { status: 'loading' } | { status: 'failed' } | { status: 'ready'; keys: ApiKeySummary[] };

const shortTime = (iso: string | null) => (iso === null ? texts.never : new Date(iso).toLocaleString('en-US', { dateStyle: 'medium', timeStyle: 'short' }));

function stateOf(key: ApiKeySummary): string {
  if (key.revokedAt) return texts.revoked;
  if (key.expiresAt && Date.parse(key.expiresAt) <= Date.now()) return texts.expired;
  return texts.active;
}

/**
 * The API keys area of /admin (issue 32 point 2): the keys with their scopes and last use, a form
 * to create one (the key is shown once, here), and revocation behind a confirm step. Loaded on its
 * own chunk when the dashboard renders. Roles (issue 32 point 4) will show it to owners only.
 */
export default function ApiKeysPanel({ onAccessError }: { onAccessError: (error: unknown) => boolean }) {
  const headingId = useId();
  const [load, setLoad] = useState<Load>({ status: 'loading' });
  const [version, setVersion] = useState(0);
  const reload = useCallback(() => setVersion((v) => v + 1), []);

  useEffect(() => {
    const controller = new AbortController();
    fetchApiKeys(controller.signal).then(
      (keys) => setLoad({ status: 'ready', keys }),
      (error: unknown) => {
        if (isAbort(error) || onAccessError(error)) return;
        setLoad({ status: 'failed' });
      },
    );
    return () => controller.abort();
  }, [version, onAccessError]);

  return (
    <section aria-labelledby={headingId} className="mt-8">
      <h2 id={headingId} className="text-xl font-bold tracking-tight text-white">
        {texts.heading}
      </h2>
      <div className={`${cardStyles} mt-4 space-y-6 p-5 sm:p-6`}>
        <p className="text-sm text-slate-300">
          {texts.intro}{' '}
          <a className={buttonStyles.link} href={texts.docsPath}>
            {texts.docsLink}
          </a>
        </p>
        {load.status === 'loading' && <CardLoading label={texts.loading} />}
        {load.status === 'failed' && <CardLoadFailed
            text={texts.loadFailed}
            retryLabel={texts.tryAgain}
            onRetry={() => {
              setLoad({ status: 'loading' });
              reload();
            }}
          />}
        {load.status === 'ready' && <KeyTable keys={load.keys} onChanged={reload} onAccessError={onAccessError} />}
        <CreateKeyForm onCreated={reload} onAccessError={onAccessError} />
      </div>
    </section>
  );
}

function KeyTable({ keys, onChanged, onAccessError }: { keys: ApiKeySummary[]; onChanged: () => void; onAccessError: (error: unknown) => boolean }) {
  if (keys.length === 0) return <p className="text-sm text-slate-400">{texts.empty}</p>;
  const c = texts.columns;
  return (
    <div className="overflow-x-auto" tabIndex={0} role="region" aria-label={`${texts.heading}: table`}>
      <table className="w-full text-left text-sm">
        <thead className="text-slate-400">
          <tr>
            {[c.name, c.key, c.scopes, c.created, c.expires, c.lastUsed, c.state].map((name) => (
              <th key={name} scope="col" className="px-2 py-2 font-medium">
                {name}
              </th>
            ))}
            <th scope="col" className="px-2 py-2 font-medium">
              <span className="sr-only">{c.actions}</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {keys.map((key) => (
            <tr key={key.id} className="border-t border-white/10 text-slate-200">
              <td className="px-2 py-2 font-medium text-white">{key.name}</td>
              <td className="px-2 py-2 font-mono text-xs">{key.prefix}…</td>
              <td className="px-2 py-2">{key.scopes.join(', ')}</td>
              <td className="px-2 py-2 whitespace-nowrap">{shortTime(key.createdAt)}</td>
              <td className="px-2 py-2 whitespace-nowrap">{shortTime(key.expiresAt)}</td>
              <td className="px-2 py-2 whitespace-nowrap">{shortTime(key.lastUsedAt)}</td>
              <td className="px-2 py-2">{stateOf(key)}</td>
              <td className="px-2 py-2 text-right">{!key.revokedAt && <RevokeButton apiKey={key} onRevoked={onChanged} onAccessError={onAccessError} />}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function RevokeButton({ apiKey, onRevoked, onAccessError }: { apiKey: ApiKeySummary; onRevoked: () => void; onAccessError: (error: unknown) => boolean }) {
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const revoke = () => {
    setBusy(true);
    revokeApiKey(apiKey.id).then(
      () => {
        setBusy(false);
        setOpen(false);
        onRevoked();
      },
      (err: unknown) => {
        setBusy(false);
        if (onAccessError(err)) return;
        setError(`${texts.revokeFailed}: ${err instanceof Error ? err.message : String(err)}`);
      },
    );
  };
  return (
    <ConfirmDialog
      open={open}
      onOpenChange={setOpen}
      title={texts.revokeTitle}
      description={
        <>
          {texts.revokeDescription(apiKey.name)}
          {error && <span className="mt-2 block text-rose-300">{error}</span>}
        </>
      }
      confirmLabel={texts.revoke}
      busy={busy}
      onConfirm={revoke}
      trigger={
        <button type="button" className={buttonStyles.secondary} aria-label={`${texts.revoke} ${apiKey.name}`}>
          {texts.revoke}
        </button>
      }
    />
  );
}

function CreateKeyForm({ onCreated, onAccessError }: { onCreated: () => void; onAccessError: (error: unknown) => boolean }) {
  const id = useId();
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<ApiScope[]>(['entries:read']);
  const [expires, setExpires] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<{ name: string; token: string } | null>(null);
  const [copied, setCopied] = useState(false);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    const days = expires.trim() === '' ? undefined : Number(expires);
    setBusy(true);
    createApiKey({ name, scopes, ...(days === undefined ? {} : { expiresInDays: days }) }).then(
      (result) => {
        setBusy(false);
        setCreated({ name: result.key.name, token: result.token });
        setCopied(false);
        setName('');
        setExpires('');
        onCreated();
      },
      (err: unknown) => {
        setBusy(false);
        if (onAccessError(err)) return;
        setError(`${texts.createFailed}: ${err instanceof Error ? err.message : String(err)}`);
      },
    );
  };

  if (created) {
    return (
      <div className="space-y-3 rounded-xl border border-emerald-300/30 bg-emerald-400/5 p-4" role="status">
        <p className="text-sm font-semibold text-white">
          {texts.newKey}: {created.name}
        </p>
        <p className="text-sm text-slate-300">{texts.shownOnce}</p>
        <label htmlFor={`${id}-token`} className="sr-only">
          {texts.newKey}
        </label>
        <div className="flex flex-wrap gap-2">
          <input id={`${id}-token`} readOnly value={created.token} className={`${inputStyles} min-w-0 flex-1 font-mono text-sm`} onFocus={(e) => e.currentTarget.select()} />
          <button
            type="button"
            className={buttonStyles.secondary}
            onClick={() => void navigator.clipboard?.writeText(created.token).then(() => setCopied(true), () => undefined)}
          >
            {copied ? texts.copied : texts.copy}
          </button>
          <button type="button" className={buttonStyles.primary} onClick={() => setCreated(null)}>
            {texts.done}
          </button>
        </div>
      </div>
    );
  }

  return (
    <form onSubmit={submit} className="space-y-4" aria-labelledby={`${id}-heading`}>
      <h3 id={`${id}-heading`} className="text-base font-semibold text-white">
        {texts.createHeading}
      </h3>
      <div className="grid gap-4 sm:grid-cols-2">
        <div>
          <label htmlFor={`${id}-name`} className="mb-1 block text-sm text-slate-300">
            {texts.name}
          </label>
          <input id={`${id}-name`} required maxLength={MAX_API_KEY_NAME_LENGTH} value={name} onChange={(e) => setName(e.target.value)} className={inputStyles} disabled={busy} />
        </div>
        <div>
          <label htmlFor={`${id}-expires`} className="mb-1 block text-sm text-slate-300">
            {texts.expires}
          </label>
          <input
            id={`${id}-expires`}
            type="number"
            min={1}
            max={MAX_API_KEY_EXPIRY_DAYS}
            step={1}
            value={expires}
            onChange={(e) => setExpires(e.target.value)}
            className={inputStyles}
            disabled={busy}
          />
        </div>
      </div>
      <fieldset>
        <legend className="mb-1 text-sm text-slate-300">{texts.scopes}</legend>
        <div className="flex flex-wrap gap-x-6 gap-y-2">
          {API_SCOPES.map((scope) => (
            <label key={scope} className="flex items-center gap-2 text-sm text-slate-200">
              <input
                type="checkbox"
                checked={scopes.includes(scope)}
                disabled={busy}
                onChange={(e) => setScopes((current) => (e.target.checked ? [...current, scope] : current.filter((s) => s !== scope)))}
              />
              {texts.scopeLabels[scope]}
            </label>
          ))}
        </div>
      </fieldset>
      {error && (
        <p role="alert" className="text-sm text-rose-300">
          {error}
        </p>
      )}
      <button type="submit" className={buttonStyles.primary} disabled={busy || scopes.length === 0 || name.trim() === ''}>
        {busy && <SpinnerIcon />}
        {busy ? texts.creating : texts.create}
      </button>
    </form>
  );
}
