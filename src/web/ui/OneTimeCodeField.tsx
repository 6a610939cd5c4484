import type { Ref } from 'react';
import { LabelledInput } from './LabelledInput.js';
import { inputStyles } from './styles.js';

export interface OneTimeCodeFieldProps {
  label: string;
  /** Shown under the label; the field is described by it. */
  hint?: string;
  /** Digits only, at most `length` of them. */
  value: string;
  onChange: (digits: string) => void;
  disabled?: boolean;
  inputRef?: Ref<HTMLInputElement>;
  length?: number;
}

/**
 * One labelled field for an authenticator app's code: the numeric keypad on phones, the code
 * offered by the browser or password manager (`autocomplete="one-time-code"`), and anything that is
 * not a digit dropped, so a pasted "123 456" works (no maxLength: it would cut such a paste short).
 */
export function OneTimeCodeField({ label, hint, value, onChange, disabled, inputRef, length = 6 }: OneTimeCodeFieldProps) {
  return (
    <LabelledInput
      label={label}
      hint={hint}
      inputRef={inputRef}
      name="code"
      type="text"
      inputMode="numeric"
      autoComplete="one-time-code"
      pattern={`[0-9]{${length}}`}
      title={`${length} digits`}
      required
      spellCheck={false}
      value={value}
      onChange={(event) => onChange(event.target.value.replace(/\D/g, '').slice(0, length))}
      disabled={disabled}
      className={`${inputStyles} text-center font-mono text-xl tracking-[0.4em]`}
    />
  );
}
