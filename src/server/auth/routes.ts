import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { z } from 'zod/mini';
import { authenticate, type AuthSuccess } from './authenticate.js';
import { sessionLimits } from './session-limits.js';
import { AuthApiError, registerAuthErrorHandling, schemaProblemError, unsupportedMediaType } from './errors.js';
import { isJsonContentType } from '../http/cross-site.js';
import { getKeyRing } from './keys.js';
import { AuthService, type ClientInfo } from './service.js';
import { listUserFactors } from './factors-repository.js';
import { MfaService } from './mfa.js';
import { userJson, withFactors } from './user-json.js';
import {
  challengeResponseSchema,
  enrollFactorBodySchema,
  enrollFactorResponseSchema,
  factorParamsSchema,
  goTrueUserSchema,
  logoutQuerySchema,
  passwordGrantBodySchema,
  refreshGrantBodySchema,
  sessionResponseSchema,
  tokenQuerySchema,
  unenrollResponseSchema,
  updateUserBodySchema,
  verifyFactorBodySchema,
} from './auth-api.js';

/** GoTrue caps bodies at 1 MB (→ 413 request_entity_too_large). */
export const AUTH_BODY_LIMIT = 1024 * 1024;

const SETTINGS = {
  external: {
    anonymous_users: false, apple: false, azure: false, bitbucket: false, discord: false, facebook: false,
    snapchat: false, figma: false, fly: false, github: false, gitlab: false, google: false, keycloak: false,
    kakao: false, linkedin: false, linkedin_oidc: false, notion: false, spotify: false, slack: false,
    slack_oidc: false, workos: false, twitch: false, twitter: false, email: true, phone: false, zoom: false,
  },
  // Admin accounts are created with `npm run admin -- create`; there is no public sign-up.
  disable_signup: true,
  mailer_autoconfirm: false,
  phone_autoconfirm: false,
  sms_provider: '',
  saml_enabled: false,
  saml_private_key_next_configured: false,
  passkeys_enabled: false,
};

const HEALTH = {
  version: 'v2-compatible',
  name: 'GoTrue',
  description: 'GoTrue is a user registration and authentication API',
};

function clientInfo(request: FastifyRequest): ClientInfo {
  const ua = request.headers['user-agent'];
  return { ip: request.ip || null, userAgent: typeof ua === 'string' ? ua : null };
}

function noStore(reply: FastifyReply): FastifyReply {
  return reply.header('cache-control', 'no-store');
}

/**
 * The body of POST /token, read with the schema of its grant type: the body's shape depends on the
 * query, so it cannot be the route's one body schema. Fails as schema validation does.
 */
function grantBody<Schema extends z.ZodMiniType>(schema: Schema, body: unknown): z.output<Schema> {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const [first] = result.error.issues;
  throw schemaProblemError(first?.message ?? '', first?.code === 'custom' ? first.params : undefined);
}

/** The request decorator holding the signed-in user, set by requireUser. */
const SIGNED_IN = 'authSignedIn';

function userOf(request: FastifyRequest): AuthSuccess {
  const auth = request.getDecorator<AuthSuccess | null>(SIGNED_IN);
  if (!auth) throw new Error('requireUser did not run before this handler');
  return auth;
}

/**
 * The admin auth service, wire-compatible with the GoTrue subset auth-js uses (contract:
 * src/server/auth/auth-api.ts; reference: ../shared/docs/auth-protocol.md from the repository root).
 * Register with `{ prefix: '/auth/v1' }`. Encapsulated: its own JSON parser, body limit, 404 and
 * error handler (GoTrue error bodies).
 */
export async function authRoutes(instance: FastifyInstance): Promise<void> {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const service = new AuthService({
    db: app.database.db,
    config: app.config.auth,
    limits: app.rateLimits.signIn,
    onAuditError: (err) => app.log.error({ err }, 'audit: could not write the sign-in refusal counts'),
  });
  // Before the database closes (onClose hooks run last-added first): the last refusal counts.
  app.addHook('onClose', async () => service.close());
  const mfa = new MfaService({ db: app.database.db, secretBox: app.secretBox, limits: app.rateLimits.signIn, auth: service, mail: app.mail });
  registerAuthErrorHandling(app);

  // Every route here takes JSON (or nothing): auth-js sends `Content-Type: application/json` with no
  // body on /logout, which Fastify's own parser would reject. Only JSON (security review, finding 3):
  // a page elsewhere can make its visitors' browsers post text/plain, urlencoded or multipart bodies
  // without a preflight, never application/json; anything else is a 415 (errors.ts).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: AUTH_BODY_LIMIT }, (request, body, done) => {
    if (!isJsonContentType(request.headers['content-type'])) return done(unsupportedMediaType(), undefined);
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(new AuthApiError(400, 'bad_json', 'Could not parse request body as JSON'), undefined);
    }
  });
  app.addHook('onRoute', (route) => {
    route.bodyLimit = AUTH_BODY_LIMIT;
  });

  app.decorateRequest(SIGNED_IN, null);
  /** preValidation: as in GoTrue, a missing or bad token is reported before anything about the body. */
  async function requireUser(request: FastifyRequest): Promise<void> {
    const result = await authenticate(app.database.db, request.headers.authorization, { maxLifetimeSeconds: app.config.auth.jwtExpirySeconds }, {
      limits: sessionLimits(app.config.auth),
      // A password change is the user's own act; GET /user and /logout are not activity.
      touch: request.method === 'PUT',
    });
    if (!result.ok) throw new AuthApiError(result.status, result.code, result.message);
    request.setDecorator(SIGNED_IN, result);
  }

  // Load (or create, on first start) the signing key before serving.
  await getKeyRing(app.database.db);

  app.post(
    '/token',
    { schema: { querystring: tokenQuerySchema, response: { 200: sessionResponseSchema } } },
    async (request, reply) => {
      const grantType = request.query.grant_type;
      if (grantType === 'password') {
        return noStore(reply).send(await service.signInWithPassword(grantBody(passwordGrantBodySchema, request.body), clientInfo(request)));
      }
      if (grantType === 'refresh_token') {
        return noStore(reply).send(await service.refresh(grantBody(refreshGrantBodySchema, request.body), clientInfo(request)));
      }
      throw new AuthApiError(400, 'invalid_credentials', 'unsupported_grant_type');
    },
  );

  app.post('/logout', { preValidation: requireUser, schema: { querystring: logoutQuerySchema } }, async (request, reply) => {
    await service.logout(userOf(request), request.query.scope, clientInfo(request));
    return reply.status(204).send();
  });

  app.get('/user', { preValidation: requireUser, schema: { response: { 200: goTrueUserSchema } } }, async (request, reply) => {
    const { user } = userOf(request);
    return noStore(reply).send(userJson(user, await listUserFactors(app.database.db, user.id)));
  });

  app.put(
    '/user',
    { preValidation: requireUser, schema: { body: updateUserBodySchema, response: { 200: goTrueUserSchema } } },
    async (request, reply) => {
      const auth = userOf(request);
      const factors = await listUserFactors(app.database.db, auth.user.id);
      const hasVerifiedFactor = factors.some((f) => f.status === 'verified');
      // GoTrue: with MFA on, changing the password takes an aal2 session. ADMIN_MFA=required: an admin
      // without a verified factor can only enrol.
      if (hasVerifiedFactor && auth.session.aal !== 'aal2' && (request.body.password ?? '') !== '') {
        throw new AuthApiError(401, 'insufficient_aal', 'AAL2 session is required to update email or password when MFA is enabled.');
      }
      if (!hasVerifiedFactor && app.config.auth.mfa === 'required') {
        throw new AuthApiError(403, 'insufficient_aal', 'MFA enrollment is required before updating the user');
      }
      const user = await service.updateUser(auth, request.body);
      return noStore(reply).send(withFactors(user, await listUserFactors(app.database.db, auth.user.id)));
    },
  );

  // TOTP factors (../shared/docs/auth-mfa.md): enrol, challenge, verify, unenrol.
  app.post(
    '/factors',
    { preValidation: requireUser, schema: { body: enrollFactorBodySchema, response: { 200: enrollFactorResponseSchema } } },
    async (request, reply) => noStore(reply).send(await mfa.enroll(userOf(request), request.body, clientInfo(request), request.host)),
  );
  app.post(
    '/factors/:factorId/challenge',
    { preValidation: requireUser, schema: { params: factorParamsSchema, response: { 200: challengeResponseSchema } } },
    async (request, reply) => noStore(reply).send(await mfa.challenge(userOf(request), request.params.factorId, clientInfo(request))),
  );
  app.post(
    '/factors/:factorId/verify',
    { preValidation: requireUser, schema: { params: factorParamsSchema, body: verifyFactorBodySchema, response: { 200: sessionResponseSchema } } },
    async (request, reply) =>
      noStore(reply).send(await mfa.verify(userOf(request), request.params.factorId, request.body, clientInfo(request))),
  );
  app.delete(
    '/factors/:factorId',
    { preValidation: requireUser, schema: { params: factorParamsSchema, response: { 200: unenrollResponseSchema } } },
    async (request, reply) => noStore(reply).send(await mfa.unenroll(userOf(request), request.params.factorId, clientInfo(request))),
  );

  app.post('/signup', async () => {
    throw new AuthApiError(422, 'signup_disabled', 'Signups not allowed for this instance');
  });

  app.get('/settings', async () => SETTINGS);
  app.get('/health', async () => HEALTH);

  app.get('/.well-known/jwks.json', async (_request, reply) => {
    const ring = await getKeyRing(app.database.db);
    return reply.header('cache-control', 'public, max-age=600').send({ keys: ring.jwks });
  });
}
