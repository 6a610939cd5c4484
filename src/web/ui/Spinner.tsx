/** An animated ring announced as a status with the given name. */
export function Spinner({ label, className = 'size-8' }: { label: string; className?: string }) {
  return (
    <span role="status" aria-label={label} className="inline-flex">
      <span
        aria-hidden="true"
        className={`${className} animate-spin rounded-full border-[3px] border-emerald-400/25 border-t-emerald-400`}
      />
    </span>
  );
}
