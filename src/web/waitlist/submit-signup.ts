import {
  HONEYPOT_FIELD,
  signupErrorToast,
  SIGNUP_PATH,
  SIGNUP_TOASTS,
  type ApiError,
  type SignupErrorCode,
  type SignupRequest,
} from '../../shared/waitlist/signup-contract.js';
import type { ToastText } from '../site/toast.js';

export type SignupOutcome = { ok: true } | { ok: false; toast: ToastText };

async function serverMessage(response: Response): Promise<string | null> {
  try {
    const body = (await response.json()) as Partial<ApiError> | null;
    const message = body?.error?.message;
    return typeof message === 'string' && message.trim() !== '' ? message : null;
  } catch {
    return null;
  }
}

/** The error's toast, with the server's words when it sent any. */
async function toastFor(response: Response, code: SignupErrorCode): Promise<ToastText> {
  const toast = signupErrorToast(code);
  return { title: toast.title, description: (await serverMessage(response)) ?? toast.description };
}

/** Sends the signup and turns the answer into what the form does next: go to /thanks, or show a toast. */
export async function submitSignup(email: string, honeypot: string, fetchImpl: typeof fetch = fetch): Promise<SignupOutcome> {
  let response: Response;
  try {
    response = await fetchImpl(SIGNUP_PATH, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ email, [HONEYPOT_FIELD]: honeypot } satisfies SignupRequest),
    });
  } catch {
    return { ok: false, toast: SIGNUP_TOASTS.failure };
  }

  switch (response.status) {
    case 201:
      return { ok: true };
    case 409:
      return { ok: false, toast: SIGNUP_TOASTS.duplicate };
    case 400:
      return { ok: false, toast: await toastFor(response, 'email_invalid') };
    case 429:
      return { ok: false, toast: await toastFor(response, 'rate_limited') };
    default:
      return { ok: false, toast: SIGNUP_TOASTS.failure };
  }
}
