import { Suspense, useEffect, type ReactNode } from 'react';
import { Route, Routes, useLocation } from 'react-router';
import { PAGE_NAMES, PAGES, pageAt, type PageName } from '../../shared/site/pages.js';
import { LandingPage } from '../pages/LandingPage.js';
import { NotFoundPage } from '../pages/NotFoundPage.js';
import { ThanksPage } from '../pages/ThanksPage.js';
import { pageTitle } from '../site/page-title.js';
import { SiteLayout } from '../site/SiteLayout.js';
import { AppToaster } from '../site/toast.js';
import { AdminPage, AuthPage } from './lazy-pages.js';
import { PageLoading } from './PageLoading.js';

/** A lazily loaded page, with the loading shell while its code loads. */
function LazyPage({ children }: { children: ReactNode }) {
  return <Suspense fallback={<PageLoading />}>{children}</Suspense>;
}

function DocumentTitle() {
  const { pathname } = useLocation();
  useEffect(() => {
    document.title = pageTitle(pageAt(pathname));
  }, [pathname]);
  return null;
}

/** What each page of the page table renders; client-only pages wait for their code in `LazyPage`. */
const PAGE_ELEMENTS: Record<PageName, ReactNode> = {
  home: <LandingPage />,
  thanks: <ThanksPage />,
  notFound: <NotFoundPage />,
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

const pageRoute = (name: PageName) => <Route key={name} path={PAGES[name].path ?? '*'} element={PAGE_ELEMENTS[name]} />;

/**
 * The routes of the whole web app, from the page table: public pages inside the site layout, the
 * client-only pages (loaded on demand) on their own. Render it inside a BrowserRouter or StaticRouter.
 */
export function App() {
  return (
    <>
      <DocumentTitle />
      <Routes>
        <Route element={<SiteLayout />}>{PAGE_NAMES.filter((name) => !PAGES[name].clientOnly).map(pageRoute)}</Route>
        {PAGE_NAMES.filter((name) => PAGES[name].clientOnly).map(pageRoute)}
      </Routes>
      <AppToaster />
    </>
  );
}
