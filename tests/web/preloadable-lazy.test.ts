import { createElement, Suspense } from 'react';
import { renderToString } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { preloadableLazy } from '../../src/web/ui/preloadable-lazy.js';

function Greeting({ name }: { name: string }) {
  return createElement('p', null, `Hello ${name}`);
}

/** The module's load, settled by the test. */
function controlledModule() {
  let resolve!: () => void;
  let loads = 0;
  const gate = new Promise<void>((r) => (resolve = r));
  const load = async () => {
    loads++;
    await gate;
    return { default: Greeting };
  };
  return { load, resolve, loads: () => loads };
}

const render = (Component: ReturnType<typeof preloadableLazy<{ name: string }>>) =>
  renderToString(createElement(Suspense, { fallback: createElement('p', null, 'Loading') }, createElement(Component, { name: 'Ada' })));

describe('preloadableLazy', () => {
  it('renders through React.lazy (the fallback first) when not preloaded', () => {
    const mod = controlledModule();
    const Component = preloadableLazy(mod.load);
    expect(render(Component)).toContain('Loading');
    expect(mod.loads()).toBe(1);
  });

  it('renders the component at once, without suspending, once preload() has settled; the code loads once', async () => {
    const mod = controlledModule();
    const Component = preloadableLazy(mod.load);
    const preloaded = Component.preload();
    void Component.preload();
    mod.resolve();
    await preloaded;
    expect(render(Component)).toContain('Hello Ada');
    expect(render(Component)).not.toContain('Loading');
    expect(mod.loads()).toBe(1);
  });

  it('preload() settles even when the code fails to load (the render shows the failure)', async () => {
    const Component = preloadableLazy<{ name: string }>(() => Promise.reject(new Error('chunk failed')));
    await expect(Component.preload()).resolves.toBeUndefined();
  });
});
