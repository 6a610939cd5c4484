/**
 * What other features take from signup (the declared interface): adding a signup as the form does
 * (the API's POST /api/v1/signups), the signup's error answers, and the request's attribution.
 */
export { createSignups, type Signups, type SignupsOptions } from './signups.js';
export { signupError, signupUnavailable, type SignupOutcome } from './service.js';
export { ownOriginOf } from './routes.js';
export { screenSignup } from './screening.js';
