import { useCallback, useEffect, useId, useState } from 'react';
import type { CreatedWebhook, WebhookDeliveryView, WebhookEndpointView } from '../../../shared/admin/webhooks-api.js';
import { notifySuccess } from '../../site/toast.js';
import { ConfirmDialog } from '../../ui/ConfirmDialog.js';
import { buttonStyles, SpinnerIcon } from '../../ui/controls.js';
import { isAbort } from '../common/admin-api.js';
import { webhookTexts as texts } from './copy.js';
import { fetchDeliveries, removeWebhook, replayDelivery, rotateWebhook, setWebhookEnabled } from './webhooks-api.js';

const when = (iso: string) => iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC');

const statusStyles: Record<WebhookDeliveryView['status'], string> = {
  queued: 'text-amber-200',
  sending: 'text-sky-200',
  delivered: 'text-emerald-300',
  failed: 'text-rose-300',
};

interface EndpointCardProps {
  endpoint: WebhookEndpointView;
  onChanged: () => void;
  onSecret: (created: CreatedWebhook) => void;
  onError: (error: unknown) => void;
}

/** One endpoint: its URL, events and state, its actions, and (on demand) its recent deliveries. */
export function EndpointCard({ endpoint, onChanged, onSecret, onError }: EndpointCardProps) {
  const [busy, setBusy] = useState<null | 'toggle' | 'rotate' | 'remove'>(null);
  const [dialog, setDialog] = useState<null | 'rotate' | 'remove'>(null);
  const [showDeliveries, setShowDeliveries] = useState(false);
  const deliveriesId = useId();

  const act = async (what: 'toggle' | 'rotate' | 'remove') => {
    setBusy(what);
    try {
      if (what === 'toggle') await setWebhookEnabled(endpoint.id, !endpoint.enabled);
      if (what === 'remove') {
        await removeWebhook(endpoint.id);
        notifySuccess({ title: texts.done.removed });
      }
      if (what === 'rotate') {
        onSecret(await rotateWebhook(endpoint.id));
        notifySuccess({ title: texts.done.rotated });
      }
      setDialog(null);
      onChanged();
    } catch (error) {
      onError(error);
    } finally {
      setBusy(null);
    }
  };

  return (
    <div className="rounded-xl border border-white/10 bg-white/[0.03] p-4">
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div className="min-w-0">
          <p className="font-mono text-sm break-all text-white">{endpoint.url}</p>
          <p className="mt-1 text-sm text-slate-400">
            <span className={endpoint.enabled ? 'text-emerald-300' : 'text-rose-300'}>{endpoint.enabled ? texts.endpoint.enabled : texts.endpoint.disabled}</span>
            {endpoint.disabledReason && ` (${endpoint.disabledReason})`} · {endpoint.events.length > 0 ? endpoint.events.join(', ') : texts.endpoint.allEvents}
          </p>
          {endpoint.previousSecretUntil && <p className="mt-1 text-sm text-slate-400">{texts.endpoint.overlap(when(endpoint.previousSecretUntil))}</p>}
        </div>
        <div className="flex flex-wrap gap-2">
          <button type="button" className={buttonStyles.secondary} disabled={busy !== null} onClick={() => void act('toggle')}>
            {busy === 'toggle' && <SpinnerIcon />}
            {endpoint.enabled ? texts.endpoint.disable : texts.endpoint.enable}
          </button>
          <ConfirmDialog
            open={dialog === 'rotate'}
            onOpenChange={(open) => setDialog(open ? 'rotate' : null)}
            title={texts.endpoint.rotateTitle}
            description={texts.endpoint.rotateText}
            confirmLabel={texts.endpoint.rotate}
            confirmTone="primary"
            busy={busy === 'rotate'}
            onConfirm={() => void act('rotate')}
            trigger={
              <button type="button" className={buttonStyles.secondary} disabled={busy !== null}>
                {texts.endpoint.rotate}
              </button>
            }
          />
          <ConfirmDialog
            open={dialog === 'remove'}
            onOpenChange={(open) => setDialog(open ? 'remove' : null)}
            title={texts.endpoint.removeTitle}
            description={texts.endpoint.removeText}
            confirmLabel={texts.endpoint.remove}
            busy={busy === 'remove'}
            onConfirm={() => void act('remove')}
            trigger={
              <button type="button" className={buttonStyles.secondary} disabled={busy !== null}>
                {texts.endpoint.remove}
              </button>
            }
          />
        </div>
      </div>
      <button type="button" className={`${buttonStyles.link} mt-3`} aria-expanded={showDeliveries} aria-controls={deliveriesId} onClick={() => setShowDeliveries((v) => !v)}>
        {showDeliveries ? texts.endpoint.hideDeliveries : texts.endpoint.deliveries}
      </button>
      <div id={deliveriesId}>{showDeliveries && <Deliveries endpointId={endpoint.id} onError={onError} />}</div>
    </div>
  );
}

function Deliveries({ endpointId, onError }: { endpointId: string; onError: (error: unknown) => void }) {
  const [deliveries, setDeliveries] = useState<WebhookDeliveryView[] | null>(null);
  const [version, setVersion] = useState(0);
  const [replaying, setReplaying] = useState<string | null>(null);
  const refresh = useCallback(() => setVersion((v) => v + 1), []);

  useEffect(() => {
    const controller = new AbortController();
    fetchDeliveries(endpointId, controller.signal).then(setDeliveries, (error: unknown) => {
      if (!isAbort(error)) onError(error);
    });
    return () => controller.abort();
  }, [endpointId, version, onError]);

  const replay = async (id: string) => {
    setReplaying(id);
    try {
      await replayDelivery(id);
      notifySuccess({ title: texts.done.replayed });
      refresh();
    } catch (error) {
      onError(error);
    } finally {
      setReplaying(null);
    }
  };

  if (deliveries === null) return <p className="mt-2 text-sm text-slate-400">…</p>;
  return (
    <div className="mt-3">
      <button type="button" className={buttonStyles.secondary} onClick={refresh}>
        {texts.deliveries.refresh}
      </button>
      {deliveries.length === 0 ? (
        <p className="mt-2 text-sm text-slate-300">{texts.deliveries.none}</p>
      ) : (
        <div className="mt-3 overflow-x-auto" tabIndex={0} role="region" aria-label={texts.deliveries.caption}>
          <table className="w-full text-left text-sm">
            <caption className="sr-only">{texts.deliveries.caption}</caption>
            <thead className="text-xs tracking-wide text-slate-400 uppercase">
              <tr>
                <th scope="col" className="py-2 pr-4">{texts.deliveries.event}</th>
                <th scope="col" className="py-2 pr-4">{texts.deliveries.status}</th>
                <th scope="col" className="py-2 pr-4">{texts.deliveries.attempts}</th>
                <th scope="col" className="py-2 pr-4">{texts.deliveries.response}</th>
                <th scope="col" className="py-2 pr-4">{texts.deliveries.when}</th>
                <th scope="col" className="py-2"><span className="sr-only">{texts.deliveries.replay}</span></th>
              </tr>
            </thead>
            <tbody className="divide-y divide-white/5 text-slate-200">
              {deliveries.map((d) => (
                <tr key={d.id}>
                  <td className="py-2 pr-4 font-mono text-[0.8125rem]">{d.eventType}</td>
                  <td className={`py-2 pr-4 ${statusStyles[d.status]}`}>
                    {d.status}
                    {d.lastError && <span className="block text-xs text-slate-400">{d.lastError}</span>}
                  </td>
                  <td className="py-2 pr-4 tabular-nums">{d.attempts}</td>
                  <td className="py-2 pr-4 tabular-nums">{d.responseStatus ?? texts.deliveries.noResponse}</td>
                  <td className="py-2 pr-4 whitespace-nowrap">{when(d.createdAt)}</td>
                  <td className="py-2">
                    <button type="button" className={buttonStyles.link} disabled={replaying !== null} onClick={() => void replay(d.id)} aria-label={`${texts.deliveries.replay} ${d.eventType} ${when(d.createdAt)}`}>
                      {texts.deliveries.replay}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
