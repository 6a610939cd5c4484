import { Checkbox } from 'radix-ui';

interface RowCheckboxProps {
  checked: Checkbox.CheckedState;
  onCheckedChange: (checked: Checkbox.CheckedState) => void;
  label: string;
}

/** The waitlist table's checkbox (Radix), also the outbox table's. */
export function RowCheckbox({ checked, onCheckedChange, label }: RowCheckboxProps) {
  return (
    <Checkbox.Root
      checked={checked}
      onCheckedChange={onCheckedChange}
      aria-label={label}
      className="flex size-5 shrink-0 items-center justify-center rounded-md border border-slate-400 bg-transparent text-slate-950 transition-colors hover:border-emerald-300 data-[state=checked]:border-emerald-400 data-[state=checked]:bg-emerald-400 data-[state=indeterminate]:border-emerald-400 data-[state=indeterminate]:bg-emerald-400"
    >
      <Checkbox.Indicator>
        {checked === 'indeterminate' ? (
          <svg viewBox="0 0 16 16" className="size-3.5" aria-hidden="true">
            <path d="M3.5 8h9" stroke="currentColor" strokeWidth="2" strokeLinecap="round" />
          </svg>
        ) : (
          <svg viewBox="0 0 16 16" className="size-3.5" aria-hidden="true">
            <path d="m3.5 8.5 3 3 6-7" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" strokeLinejoin="round" />
          </svg>
        )}
      </Checkbox.Indicator>
    </Checkbox.Root>
  );
}
