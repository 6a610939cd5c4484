import { StrictMode, type ReactNode } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { prerenderToNodeStream } from 'react-dom/static';
import { pageAt, type LinkResultTone } from '../shared/site/pages.js';
import { App } from './app/App.js';
import { LinkResultPage } from './pages/LinkResultPage.js';
import { SignupErrorPage } from './pages/SignupErrorPage.js';
import { documentTitle, pageTitle } from './site/page-title.js';
import { StaticRouter } from './site/router.js';

export interface RenderedPage {
  /** Markup for `<div id="root">`. */
  html: string;
  /** Text of the page's `<title>`. */
  title: string;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
  return text;
}

/**
 * Prerenders one route of the app for hydration. The lazily loaded routes (/auth, /admin) come out as
 * their loading shell, which the browser renders over (it does not hydrate those). `state` is the
 * location's state, as a navigation would pass it (the thanks page's variants).
 */
export async function render(url: string, state: unknown = null): Promise<RenderedPage> {
  const errors: unknown[] = [];
  const { prelude } = await prerenderToNodeStream(
    <StrictMode>
      <StaticRouter location={url} state={state}>
        <App />
      </StaticRouter>
    </StrictMode>,
    {
      // An error inside a Suspense boundary would silently leave it to the browser: fail the build instead.
      onError(error) {
        errors.push(error);
      },
    },
  );
  const html = await readAll(prelude);
  if (errors.length > 0) throw new Error(`prerendering ${url} failed`, { cause: errors[0] });
  return { html, title: pageTitle(pageAt(new URL(url, 'http://localhost').pathname)) };
}

/**
 * The static signup error page, with the literal placeholders `{{title}}` and `{{message}}` for the
 * server to fill with HTML-escaped text.
 */
export function renderSignupErrorPage(): RenderedPage {
  const page: ReactNode = (
    <StaticRouter location="/">
      <SignupErrorPage title="{{title}}" message="{{message}}" />
    </StaticRouter>
  );
  return { html: renderToStaticMarkup(page), title: documentTitle('{{title}}') };
}

/** A no-JavaScript answer page of the e-mail links (LINK_RESULT_FILES), with the same placeholders. */
export function renderLinkResultPage(tone: LinkResultTone): RenderedPage {
  const page: ReactNode = (
    <StaticRouter location="/">
      <LinkResultPage tone={tone} title="{{title}}" message="{{message}}" />
    </StaticRouter>
  );
  return { html: renderToStaticMarkup(page), title: documentTitle('{{title}}') };
}
