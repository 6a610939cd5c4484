import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { HttpError } from '../http/errors.js';
import { signupError } from './service.js';

/**
 * The domain screening of a signup (issue 28, point 3; decision 051): a throwaway-mail domain or
 * one whose DNS says it cannot receive mail is refused with 422 (`email_disposable`,
 * `email_undeliverable`), counted by reason for the insight panel, and nothing is stored or sent.
 * Null: the signup goes on (a DNS failure or a slow answer included).
 */
export async function screenSignup(app: FastifyInstance, request: FastifyRequest, email: string): Promise<HttpError | null> {
  const refusal = await app.emailDomains.screen(email);
  if (!refusal) return null;
  app.signupScreening.count(refusal);
  request.log.info({ reason: refusal }, 'waitlist signup refused');
  return signupError(refusal === 'disposable' ? 'email_disposable' : 'email_undeliverable');
}
