/**
 * Interest lists (issue 31, decision 063): the portal's waitlist (slug `portal`, the default, its
 * spec texts unchanged) and offering lists, where an issuer "tests the waters" before filing its
 * offering statement (17 CFR 227.206). Declared once for the public page, the signup, the e-mails,
 * the admin and the CLI. No schema library here: the offering page's form and the e-mails import it.
 */
import { PORTAL_LIST } from '../waitlist/signup-contract.js';

export { PORTAL_LIST };

/** What an offering list is; the kind decides which statements it carries. */
export const LIST_KINDS = ['testing-the-waters'] as const;
export type ListKind = (typeof LIST_KINDS)[number];

/** draft: not public (its page is not found); open: takes signups; closed: says so, takes none. */
export const LIST_STATES = ['draft', 'open', 'closed'] as const;
export type ListState = (typeof LIST_STATES)[number];

/** A list's slug: its page's address and its name in the admin's URL. `portal` is the portal's own. */
export const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,46}[a-z0-9])?$/;
export const MAX_LIST_NAME_LENGTH = 120;
export const MAX_LIST_DESCRIPTION_LENGTH = 1000;

export function isValidSlug(value: unknown): value is string {
  return typeof value === 'string' && SLUG_PATTERN.test(value);
}

/** The offering page's path prefix: `/offerings/SLUG`. */
export const OFFERING_PAGE_PREFIX = '/offerings/';
export const offeringPath = (slug: string): string => `${OFFERING_PAGE_PREFIX}${slug}`;

/** The offering page's query after a signup without JavaScript: `?signup=joined` or `pending`. */
export const OFFERING_RESULT_PARAM = 'signup';

/** The signup's field naming the intended amount's band (its key, or empty: none given). */
export const INTENDED_AMOUNT_FIELD = 'intended_amount';

/**
 * The three statements every testing-the-waters communication carries (17 CFR 227.206; the
 * rule's own words, read conservatively): on the page right beside the form, and in every e-mail
 * of the list. A test fails if the page or an e-mail lacks one.
 */
export const TESTING_THE_WATERS_STATEMENTS = [
  'No money or other consideration is being solicited, and if sent in response, it will not be accepted.',
  "No offer to buy the securities can be accepted and no part of the purchase price can be received until the offering statement is filed, and then only through an intermediary's platform.",
  "A person's indication of interest involves no obligation or commitment of any kind.",
] as const;

export const STATEMENTS_HEADING = 'Testing the waters: please read';

/** The statements a list of this kind carries (the portal's: none of these). */
export function listStatements(kind: ListKind | 'portal'): readonly string[] {
  return kind === 'testing-the-waters' ? TESTING_THE_WATERS_STATEMENTS : [];
}

// ---------------------------------------------------------------------------------------------
// Intended amounts: bands the admin sets as boundaries in whole US dollars ([1000, 5000, 25000]
// gives under $1,000, $1,000 to $5,000, $5,000 to $25,000, $25,000 or more). A band's key names its
// range (`1000-5000`, `25000-`), so a stored answer keeps its meaning when the bands change.

export const MAX_BAND_BOUNDARIES = 8;
export const MAX_BAND_AMOUNT = 10_000_000;

export interface AmountBand {
  key: string;
  label: string;
  /** Whole dollars, inclusive. */
  min: number;
  /** Whole dollars, exclusive; null: no upper end. */
  max: number | null;
}

/** Why boundaries are not usable, or null when they are. */
export function boundariesProblem(boundaries: readonly unknown[]): string | null {
  if (boundaries.length < 1 || boundaries.length > MAX_BAND_BOUNDARIES) return `give 1 to ${MAX_BAND_BOUNDARIES} amounts`;
  let previous = 0;
  for (const value of boundaries) {
    if (typeof value !== 'number' || !Number.isInteger(value) || value <= previous || value > MAX_BAND_AMOUNT) {
      return `amounts are whole dollars, increasing, from 1 to ${MAX_BAND_AMOUNT.toLocaleString('en-US')}`;
    }
    previous = value;
  }
  return null;
}

const dollars = (n: number) => `$${n.toLocaleString('en-US')}`;

export function bandLabel(min: number, max: number | null): string {
  if (min === 0 && max !== null) return `Under ${dollars(max)}`;
  if (max === null) return `${dollars(min)} or more`;
  return `${dollars(min)} to ${dollars(max)}`;
}

/** The bands of a list's boundaries, smallest first. */
export function amountBands(boundaries: readonly number[] | null): AmountBand[] {
  if (!boundaries || boundaries.length === 0) return [];
  const edges = [0, ...boundaries];
  return edges.map((min, i) => {
    const max = i + 1 < edges.length ? edges[i + 1]! : null;
    return { key: `${min}-${max ?? ''}`, label: bandLabel(min, max), min, max };
  });
}

/** A stored band key read back (also one the bands no longer have), or null when it is not one. */
export function parseBandKey(key: string): AmountBand | null {
  const m = /^(\d{1,8})-(\d{1,8})?$/.exec(key);
  if (!m) return null;
  const min = Number(m[1]);
  const max = m[2] === undefined ? null : Number(m[2]);
  if (max !== null && max <= min) return null;
  return { key, label: bandLabel(min, max), min, max };
}

/** "1000, 5000, 25000" (the admin's field, the CLI's --bands) as boundaries; throws with the problem. */
export function parseBoundaries(text: string): number[] | null {
  const parts = text
    .split(',')
    .map((p) => p.trim().replace(/^\$/, '').replace(/[,_ ]/g, ''))
    .filter((p) => p !== '');
  if (parts.length === 0) return null;
  const values = parts.map((p) => (/^\d+$/.test(p) ? Number(p) : NaN));
  const problem = boundariesProblem(values);
  if (problem) throw new Error(`Amount bands: ${problem}.`);
  return values;
}

// ---------------------------------------------------------------------------------------------
// The offering page's and e-mails' words ({issuer} and {productName} are filled in).

export const offeringContent = {
  kicker: 'Indication of interest on {productName}',
  form: { label: 'Email', placeholder: 'Enter your email', submit: 'Indicate interest' },
  amount: {
    legend: 'Intended amount (optional, non-binding)',
    none: 'Prefer not to say',
    note: 'This amount is not binding and is not an order. It does not give you any priority or allocation. Under Regulation Crowdfunding, the amount an investor who is not accredited may invest across all Regulation Crowdfunding offerings in 12 months is limited (17 CFR 227.100(a)(2)).',
    educationLink: 'Read the educational materials',
  },
  closed: { title: 'This list is closed', message: '{issuer} no longer takes indications of interest on {productName}.' },
  joined: { title: 'Thank you', message: 'Your indication of interest in {issuer} is recorded. It involves no obligation or commitment of any kind.' },
  pending: { title: 'Check your inbox', message: 'We sent a link to confirm your email address. Your indication of interest counts once you open it.' },
  email: {
    reason: 'You receive this e-mail because this address indicated interest in {issuer} on {productName}.',
    confirmation: {
      subject: 'Confirm your interest in {issuer} on {productName}',
      preview: 'One click to confirm your indication of interest.',
      heading: 'Confirm your email',
      body: 'You indicated interest in {issuer} on {productName}. Please confirm that this address is yours:',
    },
    welcome: {
      subject: 'Your interest in {issuer} on {productName}',
      preview: 'Your indication of interest is recorded.',
      heading: 'Your interest is recorded',
      body: 'Thank you for indicating interest in {issuer} on {productName}. We will e-mail you if there is news about it.',
    },
    invite: {
      subject: 'News about {issuer} on {productName}',
      preview: 'An update about the offering you asked to hear about.',
      heading: 'An update about {issuer}',
      body: 'You asked to hear about {issuer} on {productName}. Its page on {productName} has been updated: read it, and its offering materials, before you decide anything.',
      button: 'Read the update',
    },
  },
} as const;

/** The CSV columns an offering list's export adds after the others (never the portal's). */
export const LIST_CSV_HEADERS = { list: 'List', amount: 'Intended amount' } as const;

export function fillOffering(text: string, values: { issuer: string; productName: string }): string {
  return text.replace(/\{(issuer|productName)\}/g, (_m, name: 'issuer' | 'productName') => values[name]);
}

/** The preferences page's part for a person on several lists (issue 31). */
export const LEAVE_ALL_WORDS = {
  heading: 'Your lists',
  explanation: 'Leave every list this address is on: no more e-mail from any of them.',
  button: 'Leave every list',
  busy: 'Leaving…',
  done: { title: 'You left every list', message: 'This address will get no more e-mail from any of our lists.' },
} as const;
