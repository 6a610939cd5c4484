import { buttonStyles } from '../../ui/controls.js';
import { Spinner } from '../../ui/Spinner.js';

/** An account card's loading and load-failed states (the two-factor and sessions cards). */
export function CardLoading({ label }: { label: string }) {
  return (
    <div className="flex justify-center py-6">
      <Spinner label={label} className="size-8" />
    </div>
  );
}

export function CardLoadFailed({ text, retryLabel, onRetry }: { text: string; retryLabel: string; onRetry: () => void }) {
  return (
    <div className="flex flex-wrap items-center gap-3">
      <p className="text-sm text-slate-300">{text}</p>
      <button type="button" className={buttonStyles.secondary} onClick={onRetry}>
        {retryLabel}
      </button>
    </div>
  );
}
