/** The wire contract of `POST /api/waitlist`, shared by the form and the server. */
export const SIGNUP_PATH = '/api/waitlist';

/** Name of the hidden field that only bots fill in. */
export const HONEYPOT_FIELD = 'company_website';

export type SignupErrorCode =
  | 'email_required'
  | 'email_invalid'
  | 'email_too_long'
  | 'already_registered'
  | 'rate_limited'
  | 'bad_request'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'internal_error';

export interface SignupSuccess {
  status: 'joined';
}

export interface ApiError {
  error: { code: string; message: string };
}

/** Toast texts from the specification (title + description), keyed by what went wrong. */
export const SIGNUP_TOASTS = {
  required: { title: 'Email required', description: 'Please enter your email address to join the waitlist.' },
  duplicate: { title: 'Already registered', description: 'This email is already on our waitlist.' },
  failure: { title: 'Something went wrong', description: 'Please try again later.' },
} as const;
