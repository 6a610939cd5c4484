import {
  createContext,
  startTransition,
  useCallback,
  useContext,
  useEffect,
  useMemo,
  useState,
  type AnchorHTMLAttributes,
  type MouseEvent,
  type ReactNode,
} from 'react';

/**
 * The site's router: the current location and a way to change it, nothing more. The pages are one table
 * (src/shared/site/pages.ts) matched by `pageAt`, so a route matcher, loaders and nested routes would
 * be dead weight on the landing page (react-router was about 12 KB of its gzipped JavaScript). The
 * names and call shapes follow react-router's, so a page reads the same either way.
 */
export interface Location {
  pathname: string;
  search: string;
  hash: string;
  /** What the navigation that led here passed along (the history entry's state); null on a fresh page load. */
  state: unknown;
}

export interface NavigateOptions {
  /** Replace the current history entry instead of adding one. */
  replace?: boolean;
  /** Kept with the history entry and read back as `location.state` (the signup's outcome for /thanks). */
  state?: unknown;
}

export type NavigateFunction = (to: string, options?: NavigateOptions) => void;

interface RouterState {
  location: Location;
  navigate: NavigateFunction;
}

const RouterContext = createContext<RouterState | null>(null);

function parseLocation(url: URL, state: unknown = null): Location {
  return { pathname: url.pathname, search: url.search, hash: url.hash, state };
}

const windowLocation = (): Location => parseLocation(new URL(window.location.href), window.history.state);

const hrefOf = ({ pathname, search, hash }: Location) => `${pathname}${search}${hash}`;

/** The browser's router: follows the address bar (back and forward too) and writes to the history. */
export function BrowserRouter({ children }: { children: ReactNode }) {
  const [location, setLocation] = useState(windowLocation);

  useEffect(() => {
    const onPopState = () => startTransition(() => setLocation(windowLocation()));
    window.addEventListener('popstate', onPopState);
    return () => window.removeEventListener('popstate', onPopState);
  }, []);

  const navigate = useCallback<NavigateFunction>((to, { replace = false, state = null } = {}) => {
    const url = new URL(to, window.location.href);
    if (url.origin !== window.location.origin) {
      window.location.assign(url.href);
      return;
    }
    const next = parseLocation(url, state);
    if (replace) window.history.replaceState(state, '', hrefOf(next));
    else window.history.pushState(state, '', hrefOf(next));
    // As react-router does: a page whose code is still loading keeps the current page on screen.
    startTransition(() => setLocation(next));
  }, []);

  const state = useMemo(() => ({ location, navigate }), [location, navigate]);
  return <RouterContext.Provider value={state}>{children}</RouterContext.Provider>;
}

function cannotNavigate(): never {
  throw new Error('a prerendered page cannot navigate');
}

/** The prerenderer's router: a fixed location (a path, optionally with a query and hash) and its `state`. */
export function StaticRouter({ location, state: locationState = null, children }: { location: string; state?: unknown; children: ReactNode }) {
  const state = useMemo(
    () => ({ location: parseLocation(new URL(location, 'http://localhost'), locationState), navigate: cannotNavigate }),
    [location, locationState],
  );
  return <RouterContext.Provider value={state}>{children}</RouterContext.Provider>;
}

function useRouter(): RouterState {
  const router = useContext(RouterContext);
  if (!router) throw new Error('render inside a BrowserRouter or StaticRouter');
  return router;
}

export function useLocation(): Location {
  return useRouter().location;
}

export function useNavigate(): NavigateFunction {
  return useRouter().navigate;
}

export interface LinkProps extends Omit<AnchorHTMLAttributes<HTMLAnchorElement>, 'href'> {
  to: string;
  /** Replace the current history entry; by default only a link to the current address does. */
  replace?: boolean;
}

/**
 * A link to a page of the site: a plain `<a href>` (so it works before hydration and opens in a new tab
 * as usual) whose ordinary click navigates without reloading the page.
 */
export function Link({ to, replace, onClick, target, ...anchor }: LinkProps) {
  const { location, navigate } = useRouter();
  const handleClick = (event: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(event);
    const modified = event.metaKey || event.altKey || event.ctrlKey || event.shiftKey;
    if (event.defaultPrevented || event.button !== 0 || modified || (target && target !== '_self')) return;
    event.preventDefault();
    navigate(to, { replace: replace ?? hrefOf(location) === to });
  };
  return <a {...anchor} href={to} target={target} onClick={handleClick} />;
}
