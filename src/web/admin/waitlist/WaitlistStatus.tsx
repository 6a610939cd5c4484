import { buttonStyles, SpinnerIcon } from '../../ui/controls.js';
import { liveTexts, loadTexts } from './copy.js';
import type { LiveStatus } from './useLiveWaitlist.js';
import type { UseWaitlist } from './useWaitlist.js';

/** The live updates' state: a dot and a word, announced politely when it changes. */
export function LiveIndicator({ status }: { status: LiveStatus }) {
  const text = status === 'live' ? liveTexts.live : status === 'connecting' ? liveTexts.connecting : liveTexts.reconnecting;
  return (
    <span role="status" title={liveTexts.hint} className="inline-flex items-center gap-1.5 rounded-full bg-white/5 px-2 py-0.5 text-xs font-medium text-slate-300 ring-1 ring-white/10 ring-inset">
      <span aria-hidden="true" className={`size-1.5 rounded-full ${status === 'live' ? 'bg-emerald-400' : 'bg-amber-300'}`} />
      {text}
    </span>
  );
}

/** Loading further pages under the table (not a role=status: the page spinner owns 'Loading'). */
export function LoadProgress({ phase, loaded, total, onRetry }: { phase: UseWaitlist['phase']; loaded: number; total: number; onRetry: () => void }) {
  return (
    <div aria-live="polite" className="mt-3 flex min-h-6 flex-wrap items-center gap-x-3 gap-y-1 text-xs text-slate-400">
      {phase === 'loading-more' && (
        <>
          <SpinnerIcon className="size-3" />
          <span>{loadTexts.more(loaded, Math.max(loaded, total))}</span>
        </>
      )}
      {phase === 'failed' && (
        <>
          <span className="text-slate-300">{loadTexts.stopped(loaded, Math.max(loaded, total))}</span>
          <button type="button" className={buttonStyles.link} onClick={onRetry}>
            {loadTexts.tryAgain}
          </button>
        </>
      )}
    </div>
  );
}

/** In place of the table's rows: a message and the one action that helps (load again, clear the filters). */
export function TableMessage({ text, actionLabel, onAction }: { text: string; actionLabel: string; onAction: () => void }) {
  return (
    <div className="flex flex-col items-center gap-4 py-16 text-center">
      <p className="text-slate-300">{text}</p>
      <button type="button" className={buttonStyles.secondary} onClick={onAction}>
        {actionLabel}
      </button>
    </div>
  );
}
