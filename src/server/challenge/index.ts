/**
 * What the signup takes from the challenge room (the declared interface): the solution's check
 * (the verifier, with the spent store behind it) and the held signup's write.
 */
export { createSignupChallenge, type SignupChallengeCheck } from './verify.js';
export { heldEntry, holdSignup, type HoldOutcome } from './hold.js';
