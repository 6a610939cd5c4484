import { useId, type InputHTMLAttributes, type Ref } from 'react';
import { inputStyles } from './styles.js';

export interface LabelledInputProps extends Omit<InputHTMLAttributes<HTMLInputElement>, 'id' | 'aria-describedby'> {
  label: string;
  /** Shown between the label and the field, which it describes. */
  hint?: string;
  inputRef?: Ref<HTMLInputElement>;
}

/** A single-line field with its visible label above it and, optionally, a hint; in the site's look unless given a className. */
export function LabelledInput({ label, hint, inputRef, className = inputStyles, ...input }: LabelledInputProps) {
  const id = useId();
  const hintId = `${id}-hint`;
  return (
    <div>
      <label htmlFor={id} className="mb-2 block text-sm font-medium text-slate-200">
        {label}
      </label>
      {hint && (
        <p id={hintId} className="-mt-1 mb-2 text-sm text-slate-400">
          {hint}
        </p>
      )}
      <input ref={inputRef} id={id} aria-describedby={hint ? hintId : undefined} className={className} {...input} />
    </div>
  );
}
