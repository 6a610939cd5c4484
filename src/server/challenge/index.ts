/**
 * What the signup takes from the challenge room (the declared interface): the solution's check,
 * its spending in the signup's transaction, and the held signup's write.
 */
export { createSignupChallenge, NO_CHALLENGE, type ChallengeVerdict, type SignupChallengeCheck } from './verify.js';
export { solutionSpender, type Solution, type SolutionSpender } from './spent.js';
export { heldEntry, holdSignup, type HoldOutcome } from './hold.js';
