import type { ReactNode } from 'react';
import { siteContent } from '../../shared/site/content.js';
import { SiteFooter } from './SiteFooter.js';
import { SiteHeader } from './SiteHeader.js';
import { PageFrame } from './PageFrame.js';

export const MAIN_ID = 'main';

/** Header, main landmark and regulatory footer around a public page. */
export function SiteLayout({ children }: { children: ReactNode }) {
  return (
    <PageFrame>
      <a
        href={`#${MAIN_ID}`}
        className="sr-only rounded-md bg-emerald-400 px-4 py-2 font-semibold text-slate-950 focus:not-sr-only focus:absolute focus:top-3 focus:left-3 focus:z-50"
      >
        {siteContent.skipLink}
      </a>
      <SiteHeader />
      <main id={MAIN_ID} tabIndex={-1} className="flex flex-1 flex-col outline-none">
        {children}
      </main>
      <SiteFooter />
    </PageFrame>
  );
}
