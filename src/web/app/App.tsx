import { Suspense, useEffect, type ReactNode } from 'react';
import { Route, Routes, useLocation } from 'react-router';
import { LandingPage } from '../pages/LandingPage.js';
import { NotFoundPage } from '../pages/NotFoundPage.js';
import { ThanksPage } from '../pages/ThanksPage.js';
import { SiteLayout } from '../site/SiteLayout.js';
import { AppToaster } from '../site/toast.js';
import { AdminPage, AuthPage } from './lazy-pages.js';
import { PageLoading } from './PageLoading.js';
import { paths, titleForPath } from './paths.js';

/** A lazily loaded page, with the loading shell while its code loads. */
function LazyPage({ children }: { children: ReactNode }) {
  return <Suspense fallback={<PageLoading />}>{children}</Suspense>;
}

function DocumentTitle() {
  const { pathname } = useLocation();
  useEffect(() => {
    document.title = titleForPath(pathname);
  }, [pathname]);
  return null;
}

/** The route table of the whole web app. Render it inside a router (BrowserRouter or StaticRouter). */
export function App() {
  return (
    <>
      <DocumentTitle />
      <Routes>
        <Route element={<SiteLayout />}>
          <Route index element={<LandingPage />} />
          <Route path={paths.thanks} element={<ThanksPage />} />
          <Route path="*" element={<NotFoundPage />} />
        </Route>
        <Route
          path={paths.auth}
          element={
            <LazyPage>
              <AuthPage />
            </LazyPage>
          }
        />
        <Route
          path={paths.admin}
          element={
            <LazyPage>
              <AdminPage />
            </LazyPage>
          }
        />
      </Routes>
      <AppToaster />
    </>
  );
}
