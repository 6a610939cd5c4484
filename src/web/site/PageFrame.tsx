import type { ReactNode } from 'react';

/** The full-height page frame with the site's decorative backdrop, shared by every page layout. */
export function PageFrame({ children }: { children: ReactNode }) {
  return (
    <div className="relative isolate flex min-h-dvh flex-col overflow-x-clip">
      <div aria-hidden="true" className="site-backdrop pointer-events-none absolute inset-x-0 top-0 -z-10 h-[42rem]" />
      {children}
    </div>
  );
}
