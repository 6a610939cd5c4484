import { Suspense, useEffect, type ReactNode } from 'react';
import { PAGES, pageAt, type PageName } from '../../shared/site/pages.js';
import { LandingPage } from '../pages/LandingPage.js';
import { NotFoundPage } from '../pages/NotFoundPage.js';
import { ThanksPage } from '../pages/ThanksPage.js';
import { pageTitle } from '../site/page-title.js';
import { useLocation } from '../site/router.js';
import { SiteLayout } from '../site/SiteLayout.js';
import { AppToaster } from '../site/toast.js';
import { AdminPage, AuthPage, ConfirmPage, ErasePage, PreferencesPage } from './lazy-pages.js';
import { PageLoading } from './PageLoading.js';

/** A lazily loaded page, with the loading shell while its code loads. */
function LazyPage({ children }: { children: ReactNode }) {
  return <Suspense fallback={<PageLoading />}>{children}</Suspense>;
}

/** What each page of the page table renders; client-only pages wait for their code in `LazyPage`. */
const PAGE_ELEMENTS: Record<PageName, ReactNode> = {
  home: <LandingPage />,
  thanks: <ThanksPage />,
  notFound: <NotFoundPage />,
  // Inside the site layout, which stays while the code loads on a navigation (hydration keeps the prerendered page).
  confirm: (
    <Suspense fallback={null}>
      <ConfirmPage />
    </Suspense>
  ),
  preferences: (
    <Suspense fallback={null}>
      <PreferencesPage />
    </Suspense>
  ),
  erase: (
    <Suspense fallback={null}>
      <ErasePage />
    </Suspense>
  ),
  auth: (
    <LazyPage>
      <AuthPage />
    </LazyPage>
  ),
  admin: (
    <LazyPage>
      <AdminPage />
    </LazyPage>
  ),
};

/**
 * The whole web app: the page at the current address (`pageAt`, the page table's own matching), public
 * pages inside the site layout, client-only pages on their own. Render it inside a BrowserRouter or
 * StaticRouter (src/web/site/router.tsx). `onMounted` runs once the first render (or the hydration) has
 * been committed and every effect of the page has run.
 */
export function App({ onMounted }: { onMounted?: () => void }) {
  const page = pageAt(useLocation().pathname);

  useEffect(() => {
    document.title = pageTitle(page);
  }, [page]);

  // Declared last, so it runs after the effects above and, as a parent's do, after the page's own.
  useEffect(() => {
    onMounted?.();
  }, [onMounted]);

  const element = PAGE_ELEMENTS[page];
  return (
    <>
      {PAGES[page].clientOnly ? element : <SiteLayout>{element}</SiteLayout>}
      <AppToaster />
    </>
  );
}
