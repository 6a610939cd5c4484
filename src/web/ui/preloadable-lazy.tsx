import { lazy, useState, type ComponentType, type FunctionComponent } from 'react';

/** A lazily loaded component whose code can be fetched ahead of its first render. */
export interface PreloadableComponent<P extends object> extends FunctionComponent<P> {
  /** Starts loading the code (once); settles when it is in. A failure is left to the render, which shows it as React.lazy does. */
  preload(): Promise<void>;
}

/**
 * React.lazy, plus `preload()`. React 19 holds back the reveal of a Suspense boundary's content until
 * 300 ms after its fallback was shown (FALLBACK_THROTTLE_MS), so a page whose code arrives in 40 ms
 * still appears after 300. A component preloaded before it first renders never suspends: it renders
 * the loaded code directly. One that has not arrived yet renders through React.lazy, and keeps doing
 * so for its whole life (switching the component type later would remount it and lose its state).
 */
export function preloadableLazy<P extends object>(load: () => Promise<{ default: ComponentType<P> }>): PreloadableComponent<P> {
  let loaded: ComponentType<P> | undefined;
  let loading: Promise<{ default: ComponentType<P> }> | undefined;
  const start = () => {
    loading ??= load().then((module) => {
      loaded = module.default;
      return module;
    });
    return loading;
  };
  const Lazy = lazy(start);

  function Preloadable(props: P) {
    const [Component] = useState<ComponentType<P>>(() => loaded ?? Lazy);
    return <Component {...props} />;
  }
  return Object.assign(Preloadable, {
    preload: () =>
      start().then(
        () => undefined,
        () => undefined,
      ),
  });
}
