import { useEffect, useState } from 'react';

interface Props {
  items: readonly string[];
  intervalMs: number;
  /** Screen-reader text placed before the list of all items. */
  srLabel: string;
}

/**
 * Cycles through `items`, one every `intervalMs`. The changing word is hidden from assistive technology
 * (no announcement every few seconds); a static sentence lists every item instead. Starts on the first
 * item on the server and in the first client render. Each new word slides in; under
 * prefers-reduced-motion the stylesheet drops that animation and the word simply changes.
 */
export function RotatingCategory({ items, intervalMs, srLabel }: Props) {
  const [tick, setTick] = useState(0);
  const animate = items.length > 1;

  useEffect(() => {
    if (!animate) return;
    const timer = window.setInterval(() => setTick((t) => t + 1), intervalMs);
    return () => window.clearInterval(timer);
  }, [animate, intervalMs, items.length]);

  const shown = animate ? tick % items.length : 0;
  const moved = animate && tick > 0;
  return (
    <p className="text-2xl font-semibold tracking-tight sm:text-3xl">
      <span className="sr-only">
        {srLabel} {items.join(', ')}.
      </span>
      <span aria-hidden="true" data-testid="rotating-category" className="inline-block text-emerald-300">
        <span key={moved ? tick : 0} className={moved ? 'rotate-in inline-block' : 'inline-block'}>
          {items[shown]}
        </span>
      </span>
    </p>
  );
}
