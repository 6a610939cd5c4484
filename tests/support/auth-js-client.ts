import { AuthClient } from '@supabase/auth-js';
import type { FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';

/** An in-memory stand-in for localStorage; `map` lets a test look at what auth-js stored. */
export function memoryStorage() {
  const map = new Map<string, string>();
  return { map, getItem: (k: string) => map.get(k) ?? null, setItem: (k: string, v: string) => void map.set(k, v), removeItem: (k: string) => void map.delete(k) };
}

/** The /auth/v1 base URL of an app listening on 127.0.0.1 (it is started on a free port if it is not yet). */
export async function authBaseUrl(app: FastifyInstance): Promise<string> {
  if (!app.server.listening) await app.listen({ host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/auth/v1`;
}

/** The real, unmodified auth-js client as a browser tab would hold it, with its storage. */
export function authJsClient(baseUrl: string, storageKey = 'sb-test-auth-token') {
  const storage = memoryStorage();
  const auth = new AuthClient({ url: baseUrl, storageKey, storage, autoRefreshToken: false, detectSessionInUrl: false, persistSession: true });
  return { auth, storage };
}
