/** The brand mark: stacked ledger blocks on a rounded tile. Decorative: the product name sits beside it. */
export function LogoMark({ className }: { className?: string }) {
  return (
    <svg viewBox="0 0 32 32" className={className} aria-hidden="true" focusable="false">
      <rect width="32" height="32" rx="8" fill="#34d399" />
      <path d="M8 21.5 16 25l8-3.5" fill="none" stroke="#04111f" strokeWidth="2.4" strokeLinecap="round" strokeLinejoin="round" />
      <path d="M8 16.5 16 20l8-3.5" fill="none" stroke="#04111f" strokeWidth="2.4" strokeLinecap="round" strokeLinejoin="round" opacity=".7" />
      <path d="m8 11.5 8-3.5 8 3.5-8 3.5z" fill="#04111f" />
    </svg>
  );
}
