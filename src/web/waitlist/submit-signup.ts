import {
  CONSENT_FIELD,
  HONEYPOT_FIELD,
  isSignupErrorCode,
  signupErrorToast,
  SIGNUP_PATH,
  SIGNUP_TOASTS,
  type ApiError,
  type SignupErrorCode,
  type SignupRequest,
} from '../../shared/waitlist/signup-contract.js';
import { CHALLENGE_FIELD } from '../../shared/waitlist/challenge-contract.js';
import type { ToastText } from '../site/toast.js';
import type { CapturedAttribution } from './attribution-capture.js';

/** `pending`: double opt-in is on and the confirmation e-mail is on its way (the thanks page says so). */
export type SignupOutcome = { ok: true; pending: boolean } | { ok: false; toast: ToastText };

async function errorOf(response: Response): Promise<Partial<ApiError['error']>> {
  try {
    const body = (await response.json()) as Partial<ApiError> | null;
    return body?.error ?? {};
  } catch {
    return {};
  }
}

/** The error's toast (by the code the server sent, else `fallback`), with the server's words when it sent any. */
async function toastFor(response: Response, fallback: SignupErrorCode): Promise<ToastText> {
  const { code, message } = await errorOf(response);
  const toast = signupErrorToast(typeof code === 'string' && isSignupErrorCode(code) ? code : fallback);
  return { title: toast.title, description: typeof message === 'string' && message.trim() !== '' ? message : toast.description };
}

async function isPending(response: Response): Promise<boolean> {
  try {
    const body = (await response.json()) as { status?: unknown } | null;
    return body?.status === 'pending';
  } catch {
    return false;
  }
}

/**
 * Sends the signup and turns the answer into what the form does next: go to /thanks, or show a toast.
 * `consent`: the consent box was ticked (sent only when the form has one). `attribution`: the
 * visit's first touch (attribution-capture.ts), sent flat beside the address. `solution`: the
 * proof of work (challenge.ts), when the server asks for one.
 */
export async function submitSignup(
  email: string,
  honeypot: string,
  consent = false,
  attribution: CapturedAttribution = {},
  fetchImpl: typeof fetch = fetch,
  solution: string | null = null,
): Promise<SignupOutcome> {
  const body: SignupRequest = {
    ...attribution,
    email,
    [HONEYPOT_FIELD]: honeypot,
    ...(consent ? { [CONSENT_FIELD]: true } : {}),
    ...(solution !== null ? { [CHALLENGE_FIELD]: solution } : {}),
  };
  let response: Response;
  try {
    response = await fetchImpl(SIGNUP_PATH, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
    });
  } catch {
    return { ok: false, toast: SIGNUP_TOASTS.failure };
  }

  switch (response.status) {
    case 201:
      return { ok: true, pending: await isPending(response) };
    case 409:
      return { ok: false, toast: SIGNUP_TOASTS.duplicate };
    case 400:
    case 422:
      return { ok: false, toast: await toastFor(response, 'email_invalid') };
    case 429:
      return { ok: false, toast: await toastFor(response, 'rate_limited') };
    default:
      return { ok: false, toast: SIGNUP_TOASTS.failure };
  }
}
