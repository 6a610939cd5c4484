import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

/**
 * The admin sign-in every test makes: GoTrue's password grant, with the body auth-js's
 * `signInWithPassword` sends. Works in process (`app.inject`) and over HTTP (`fetch` to a base URL),
 * so Vitest suites and the Playwright fixture share it.
 */
export const PASSWORD_GRANT_URL = '/auth/v1/token?grant_type=password';

export interface Credentials {
  email: string;
  password: string;
}

/** The session the grant answers with; auth-js keeps exactly this object in localStorage. */
export interface AuthSession {
  access_token: string;
  refresh_token: string;
  expires_at: number;
  user: { id: string; email?: string };
}

/** Sends the password grant and returns the raw answer, for tests that look at failures too. */
export function postPasswordGrant(app: FastifyInstance, credentials: Credentials): Promise<LightMyRequestResponse>;
export function postPasswordGrant(baseUrl: string, credentials: Credentials, headers?: Record<string, string>): Promise<Response>;
export function postPasswordGrant(
  target: FastifyInstance | string,
  { email, password }: Credentials,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse | Response> {
  const payload = { email, password, gotrue_meta_security: {} };
  if (typeof target !== 'string') return target.inject({ method: 'POST', url: PASSWORD_GRANT_URL, headers, payload });
  return fetch(`${target}${PASSWORD_GRANT_URL}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(payload),
  });
}

/** Signs in and returns the session; throws with the server's answer unless it is a 200. */
export async function signIn(target: FastifyInstance | string, credentials: Credentials): Promise<AuthSession> {
  const { status, body } =
    typeof target === 'string'
      ? await postPasswordGrant(target, credentials).then(async (res) => ({ status: res.status, body: await res.text() }))
      : await postPasswordGrant(target, credentials).then((res) => ({ status: res.statusCode, body: res.body }));
  if (status !== 200) throw new Error(`sign-in as ${credentials.email} failed with ${status}: ${body}`);
  return JSON.parse(body) as AuthSession;
}
