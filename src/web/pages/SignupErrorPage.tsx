import { Link } from '../site/router.js';
import { PAGES } from '../../shared/site/pages.js';
import { prerenderContent } from '../../shared/site/content.js';
import { SiteLayout } from '../site/SiteLayout.js';
import { cardStyles, primaryLinkStyles } from '../ui/styles.js';

/**
 * Template of the script-free page the server shows when a form post (no JavaScript) fails. The server
 * replaces the `title` and `message` placeholders with HTML-escaped text.
 */
export function SignupErrorPage({ title, message }: { title: string; message: string }) {
  return (
    <SiteLayout>
      <section className="mx-auto flex w-full max-w-xl flex-1 flex-col items-center justify-center px-5 py-16 text-center sm:px-8">
        <div className={`w-full ${cardStyles} px-6 py-10 sm:px-10`}>
          <div className="mx-auto mb-6 flex size-14 items-center justify-center rounded-full bg-amber-400/15 text-amber-300">
            <svg viewBox="0 0 24 24" className="size-7" aria-hidden="true" focusable="false">
              <path d="M12 8v5m0 3.5v.5" fill="none" stroke="currentColor" strokeWidth="2.5" strokeLinecap="round" />
              <circle cx="12" cy="12" r="9.5" fill="none" stroke="currentColor" strokeWidth="2" />
            </svg>
          </div>
          <h1 className="text-2xl font-bold tracking-tight text-white sm:text-3xl">{title}</h1>
          <p className="mt-4 text-slate-200">{message}</p>
          <Link to={PAGES.home.path} className={`mt-8 ${primaryLinkStyles}`}>
            {prerenderContent.signupError.backLink}
          </Link>
        </div>
      </section>
    </SiteLayout>
  );
}
