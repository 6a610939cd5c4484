import { AuthClient } from '@supabase/auth-js';

/** localStorage key of the admin session; also the name of auth-js's cross-tab BroadcastChannel. */
export const AUTH_STORAGE_KEY = 'sb-waitlist-auth-token';

export type BrowserAuthClient = InstanceType<typeof AuthClient>;

let client: BrowserAuthClient | undefined;

/**
 * The browser's one auth client, created on first use. Session persistence (localStorage), the 30 s
 * auto-refresh tick, refresh retries and cross-tab events all come from auth-js itself.
 *
 * Call it only from effects and event handlers: the prerender runs components in Node, where there
 * is no `window` and no session to look at.
 */
export function getAuthClient(): BrowserAuthClient {
  if (typeof window === 'undefined') {
    throw new Error('getAuthClient() is browser-only; call it from an effect or an event handler.');
  }
  client ??= new AuthClient({
    url: `${window.location.origin}/auth/v1`,
    storageKey: AUTH_STORAGE_KEY,
    detectSessionInUrl: false,
    autoRefreshToken: true,
    persistSession: true,
  });
  return client;
}

/** The message auth-js gives for a failed call, with a fallback for errors that carry none. */
export function authErrorMessage(error: unknown): string {
  if (error instanceof Error && error.message.trim() !== '') return error.message;
  return 'Something went wrong. Please try again.';
}
