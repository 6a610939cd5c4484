import {
  CONFIRM_API_PATH,
  ERASE_API_PATH,
  ERASE_LINK_API_PATH,
  isLinkErrorCode,
  LINK_TOKEN_PARAM,
  PREFERENCES_API_PATH,
  UNSUBSCRIBE_ALL_API_PATH,
  UNSUBSCRIBE_API_PATH,
  type ConfirmOutcome,
  type EraseLinkSent,
  type LinkErrorCode,
  type PreferencesView,
  type UnsubscribeOutcome,
} from '../../shared/waitlist/consent-contract.js';
// Types only from entry.ts: its values would bring zod into these pages.
import type { EntryStatus } from '../../shared/waitlist/entry.js';
import type { ApiError } from '../../shared/waitlist/signup-contract.js';

/**
 * The e-mail link pages' calls to the JSON API (src/shared/waitlist/consent-contract.ts). Each answer is
 * the outcome, a link error the page shows in place, or `failure` (no connection, an unexpected answer)
 * that it reports as a toast, keeping the page as it was so the visitor can try again.
 */
export type LinkAnswer<T> = { ok: true; value: T } | { ok: false; error: LinkErrorCode | 'failure' };

/** The link's token from a page's query string; null when there is none. */
export function linkTokenOf(search: string): string | null {
  const token = new URLSearchParams(search).get(LINK_TOKEN_PARAM)?.trim();
  return token ? token : null;
}

async function postToken<T>(path: string, token: string, read: (body: Record<string, unknown>) => T | undefined): Promise<LinkAnswer<T>> {
  let response: Response;
  try {
    response = await fetch(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ [LINK_TOKEN_PARAM]: token }),
    });
  } catch {
    return { ok: false, error: 'failure' };
  }
  let body: unknown = null;
  try {
    body = await response.json();
  } catch {
    // Not JSON (a proxy's error page): an unexpected answer.
  }
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  if (!response.ok) {
    const code = (fields as Partial<ApiError>).error?.code;
    return { ok: false, error: typeof code === 'string' && isLinkErrorCode(code) ? code : 'failure' };
  }
  const value = read(fields);
  return value === undefined ? { ok: false, error: 'failure' } : { ok: true, value };
}

function oneOf<T extends string>(values: readonly T[], value: unknown): T | undefined {
  return values.find((candidate) => candidate === value);
}

const CONFIRM_OUTCOMES: readonly ConfirmOutcome[] = ['confirmed', 'already_confirmed'];
const UNSUBSCRIBE_OUTCOMES: readonly UnsubscribeOutcome[] = ['unsubscribed', 'already_unsubscribed'];

/** Confirms the address of a double opt-in link. */
export function confirmLink(token: string): Promise<LinkAnswer<ConfirmOutcome>> {
  return postToken(CONFIRM_API_PATH, token, (body) => oneOf(CONFIRM_OUTCOMES, body.outcome));
}

/** Who a manage or erase link is for, the address masked (changes nothing). */
export function readPreferences(token: string): Promise<LinkAnswer<PreferencesView>> {
  return postToken(PREFERENCES_API_PATH, token, (body) => {
    if (typeof body.email !== 'string' || typeof body.status !== 'string' || (body.link !== 'manage' && body.link !== 'erase')) return undefined;
    const lists = Array.isArray(body.lists)
      ? (body.lists as unknown[]).flatMap((l) => {
          const item = l as { name?: unknown; status?: unknown };
          return typeof item.name === 'string' && typeof item.status === 'string' ? [{ name: item.name, status: item.status as EntryStatus }] : [];
        })
      : undefined;
    return { email: body.email, status: body.status as EntryStatus, link: body.link, ...(lists ? { lists } : {}) };
  });
}

export function unsubscribeLink(token: string): Promise<LinkAnswer<UnsubscribeOutcome>> {
  return postToken(UNSUBSCRIBE_API_PATH, token, (body) => oneOf(UNSUBSCRIBE_OUTCOMES, body.outcome));
}

/** Leaves every list the address of a manage link is on (issue 31). */
export function unsubscribeAllLink(token: string): Promise<LinkAnswer<'unsubscribed'>> {
  return postToken(UNSUBSCRIBE_ALL_API_PATH, token, (body) => (body.outcome === 'unsubscribed' ? 'unsubscribed' : undefined));
}

/** E-mails an erasure link to the address a manage link is for. */
export function requestEraseLink(token: string): Promise<LinkAnswer<EraseLinkSent>> {
  return postToken(ERASE_LINK_API_PATH, token, (body) =>
    body.outcome === 'sent' && typeof body.email === 'string' ? { outcome: 'sent', email: body.email } : undefined,
  );
}

/** Erases the entry an erasure link is for. */
export function eraseLink(token: string): Promise<LinkAnswer<'erased'>> {
  return postToken(ERASE_API_PATH, token, (body) => oneOf(['erased'] as const, body.outcome));
}
