import { useEffect, useState, type ComponentType } from 'react';
import type * as SonnerModule from 'sonner';
import type { ToasterProps } from 'sonner';

export interface ToastText {
  title: string;
  description: string;
}

type Sonner = typeof SonnerModule;

// sonner is kept out of the landing page's initial JavaScript: it loads once the page is idle, or at the
// first toast, whichever comes first. Toasts raised before the Toaster mounts are replayed by sonner.
let sonner: Promise<Sonner> | undefined;
const loadRequests = new Set<() => void>();

function loadSonner(): Promise<Sonner> {
  if (!sonner) {
    sonner = import('sonner');
    for (const request of loadRequests) request();
  }
  return sonner;
}

function whenIdle(callback: () => void): () => void {
  if (typeof window.requestIdleCallback === 'function') {
    const handle = window.requestIdleCallback(callback, { timeout: 3000 });
    return () => window.cancelIdleCallback(handle);
  }
  const handle = window.setTimeout(callback, 1500);
  return () => window.clearTimeout(handle);
}

/** The app's one toast outlet: every `notifyError`/`notifySuccess` shows up here. */
export function AppToaster() {
  const [Toaster, setToaster] = useState<ComponentType<ToasterProps> | null>(null);

  useEffect(() => {
    let active = true;
    const mount = () => {
      void loadSonner().then((module) => {
        if (active) setToaster(() => module.Toaster);
      });
    };
    if (sonner) {
      mount();
      return () => {
        active = false;
      };
    }
    loadRequests.add(mount);
    const cancelIdle = whenIdle(loadSonner);
    return () => {
      active = false;
      loadRequests.delete(mount);
      cancelIdle();
    };
  }, []);

  if (!Toaster) return null;
  // The toast's own font-family beats the one sonner sets on the list, so toasts use the page's font.
  return <Toaster richColors closeButton position="top-center" theme="dark" toastOptions={{ classNames: { toast: 'font-sans' } }} />;
}

/** Shows an error toast with a title and a description. */
export function notifyError({ title, description }: ToastText): void {
  void loadSonner().then(({ toast }) => {
    toast.error(title, { description });
  });
}

/** Shows a success toast; the description is optional (the admin's 'Signed out successfully' has none). */
export function notifySuccess({ title, description }: Pick<ToastText, 'title'> & Partial<Pick<ToastText, 'description'>>): void {
  void loadSonner().then(({ toast }) => {
    toast.success(title, description === undefined ? undefined : { description });
  });
}
