import { useEffect } from 'react';
import { Link, useLocation } from '../site/router.js';
import { PAGES } from '../../shared/site/pages.js';
import { siteContent } from '../../shared/site/content.js';
import { primaryLinkStyles } from '../ui/styles.js';

export function NotFoundPage() {
  const { pathname } = useLocation();
  const { notFound } = siteContent;

  useEffect(() => {
    console.error('404 Error: User attempted to access non-existent route:', pathname);
  }, [pathname]);

  return (
    <section className="mx-auto flex w-full max-w-xl flex-1 flex-col items-center justify-center px-5 py-16 text-center sm:px-8">
      <p className="text-7xl font-bold tracking-tight text-emerald-300 sm:text-8xl" aria-hidden="true">
        404
      </p>
      <h1 className="mt-4 text-2xl font-bold tracking-tight text-white sm:text-3xl">{notFound.title}</h1>
      <Link to={PAGES.home.path} className={`mt-8 ${primaryLinkStyles}`}>
        {notFound.link}
      </Link>
    </section>
  );
}
