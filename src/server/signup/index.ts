/**
 * What other features take from signup (the declared interface): adding a signup as the form does
 * (the API's POST /api/v1/signups), to the portal's list or an open offering list (checked as the
 * offering page's form is), the signup's error answers, and the request's attribution.
 */
export { createSignups, type Signups, type SignupsOptions } from './signups.js';
export { signupError, signupUnavailable, type SignupOutcome } from './service.js';
export { ownOriginOf } from './routes.js';
export { screenSignup } from './screening.js';
export { offeringSignupTarget, type OfferingSignupTarget } from './offering.js';
