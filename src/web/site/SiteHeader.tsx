import { Link } from './router.js';
import { siteContent } from '../../shared/site/content.js';
import { LogoMark } from './Logo.js';

export function SiteHeader() {
  const { productName, contactEmail, header } = siteContent;
  return (
    <header className="border-b border-white/10">
      <div className="mx-auto flex max-w-6xl items-center justify-between gap-4 px-5 py-4 sm:px-8">
        <Link to="/" className="flex items-center gap-3 rounded-md font-semibold tracking-tight text-white">
          <LogoMark className="size-8 shrink-0" />
          <span>
            {productName}
            <span className="sr-only"> {header.homeLinkLabel}</span>
          </span>
        </Link>
        <a
          href={`mailto:${contactEmail}`}
          className="flex items-center gap-2 rounded-md px-2 py-1 text-sm text-slate-300 transition-colors hover:text-white"
        >
          <svg viewBox="0 0 20 20" className="size-4 shrink-0" aria-hidden="true" focusable="false">
            <path
              fill="currentColor"
              d="M3 4h14a1 1 0 0 1 1 1v10a1 1 0 0 1-1 1H3a1 1 0 0 1-1-1V5a1 1 0 0 1 1-1Zm.8 2v.3l6.2 4.1 6.2-4.1V6H3.8Zm12.4 2.4-5.7 3.8a1 1 0 0 1-1 0L3.8 8.4V14h12.4V8.4Z"
            />
          </svg>
          <span className="sm:hidden">{header.contactLabel}</span>
          <span className="hidden sm:inline">{contactEmail}</span>
        </a>
      </div>
    </header>
  );
}
