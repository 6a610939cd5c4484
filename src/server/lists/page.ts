import { escapeHtml } from '../http/error-page.js';
import type { ListRecord } from '../db/lists.js';
import { siteContent } from '../../shared/site/content.js';
import { HONEYPOT_FIELD, LIST_FIELD, SIGNUP_PATH } from '../../shared/waitlist/signup-contract.js';
import { MAX_EMAIL_LENGTH } from '../../shared/waitlist/email.js';
import {
  amountBands,
  fillOffering,
  INTENDED_AMOUNT_FIELD,
  listStatements,
  offeringContent,
  STATEMENTS_HEADING,
} from '../../shared/lists/contract.js';

/**
 * An offering list's page, `/offerings/SLUG` (issue 31): the issuer's name and description, the
 * signup form (a plain form post: no JavaScript needed, nothing loaded but the site's stylesheet),
 * the optional non-binding amount, and the statements of the list's kind right beside the form. It
 * is written into the main element of the web build's script-free page (header, footer with the
 * portal's name, registration line and legends), like every answer to a form post.
 */

/** What the page says after a signup without JavaScript (`?signup=`). */
export type OfferingResult = 'joined' | 'pending' | null;

const e = escapeHtml;

const INPUT =
  'h-12 w-full rounded-xl border border-white/15 bg-slate-950/60 px-4 text-base text-white placeholder:text-slate-400 transition-colors hover:border-white/25 focus:border-emerald-300';
const BUTTON = 'h-12 shrink-0 rounded-xl bg-emerald-400 px-6 font-semibold text-slate-950 shadow-lg shadow-emerald-500/20 transition-colors hover:bg-emerald-300';

function statements(list: ListRecord): string {
  const items = listStatements(list.kind === 'portal' ? 'portal' : list.kind);
  if (items.length === 0) return '';
  return `<aside id="offering-statements" aria-labelledby="offering-statements-heading" class="rounded-2xl border border-amber-300/30 bg-amber-400/10 p-6 text-left"><h2 id="offering-statements-heading" class="text-lg font-semibold text-white">${e(STATEMENTS_HEADING)}</h2><ul class="mt-3 list-disc space-y-2 pl-5 text-sm leading-relaxed text-slate-100">${items.map((s) => `<li>${e(s)}</li>`).join('')}</ul></aside>`;
}

function amountFieldset(list: ListRecord): string {
  const bands = amountBands(list.bands);
  if (bands.length === 0) return '';
  const { amount } = offeringContent;
  const option = (value: string, label: string, checked: boolean) =>
    `<label class="flex items-center gap-3 text-slate-100"><input type="radio" name="${INTENDED_AMOUNT_FIELD}" value="${e(value)}"${checked ? ' checked' : ''} class="size-4 accent-emerald-400"><span>${e(label)}</span></label>`;
  return `<fieldset class="mt-6 space-y-2" aria-describedby="offering-amount-note"><legend class="mb-2 text-sm font-medium text-slate-200">${e(amount.legend)}</legend>${option('', amount.none, true)}${bands.map((b) => option(b.key, b.label, false)).join('')}<p id="offering-amount-note" class="mt-3 text-sm text-slate-300">${e(amount.note)} <a href="${e(siteContent.legalUrl)}" class="rounded-sm text-emerald-300 underline underline-offset-2 hover:text-white">${e(amount.educationLink)}</a></p></fieldset>`;
}

function form(list: ListRecord): string {
  const { form: words } = offeringContent;
  return `<form action="${SIGNUP_PATH}" method="post" class="text-left md:order-first" aria-describedby="offering-statements"><input type="hidden" name="${LIST_FIELD}" value="${e(list.slug)}"><label for="offering-email" class="mb-2 block text-sm font-medium text-slate-200">${e(words.label)}</label><input id="offering-email" type="email" name="email" required autocomplete="email" inputmode="email" spellcheck="false" maxlength="${MAX_EMAIL_LENGTH}" placeholder="${e(words.placeholder)}" class="${INPUT}"><div aria-hidden="true" class="absolute -left-[10000px] top-auto size-px overflow-hidden"><label>${e(siteContent.honeypotLabel)}<input type="text" tabindex="-1" autocomplete="off" name="${HONEYPOT_FIELD}" value=""></label></div>${amountFieldset(list)}<button type="submit" class="mt-6 ${BUTTON}">${e(words.submit)}</button></form>`;
}

function notice(title: string, message: string, role: 'status' | 'alert'): string {
  return `<div role="${role}" class="mt-6 rounded-2xl border border-emerald-300/30 bg-emerald-400/10 p-5 text-left"><p class="font-semibold text-white">${e(title)}</p><p class="mt-1 text-slate-100">${e(message)}</p></div>`;
}

/** The page's main content for an open or closed list (a draft's page is not found: the route's business). */
export function offeringMain(list: ListRecord, result: OfferingResult): string {
  const fill = (text: string) => fillOffering(text, { issuer: list.name, productName: siteContent.productName });
  const parts = [
    `<p class="text-sm font-medium text-emerald-300">${e(fill(offeringContent.kicker))}</p>`,
    `<h1 class="mt-2 text-3xl font-bold tracking-tight text-white sm:text-4xl">${e(list.name)}</h1>`,
    list.description ? `<p class="mt-4 whitespace-pre-line text-slate-200">${e(list.description)}</p>` : '',
  ];
  if (list.state === 'closed') parts.push(notice(fill(offeringContent.closed.title), fill(offeringContent.closed.message), 'status'));
  else if (result) parts.push(notice(fill(offeringContent[result].title), fill(offeringContent[result].message), 'status'));
  const side = statements(list);
  // The statements come first (read before the button, on a phone too, and by a screen reader); from
  // md up the form takes the left column beside them.
  const body = list.state === 'open' ? `<div class="mt-8 grid items-start gap-8 md:grid-cols-2">${side}${form(list)}</div>` : `<div class="mt-8">${side}</div>`;
  return `<section class="mx-auto w-full max-w-4xl flex-1 px-5 py-12 sm:px-8">${parts.join('')}${body}</section>`;
}

/** The whole page: the build's script-free page (signup-error.html) with its title and main content replaced. */
export function renderOfferingPage(shell: string, list: ListRecord, result: OfferingResult): string {
  const main = offeringMain(list, result);
  return shell
    .replaceAll('{{title}}', () => e(list.name))
    .replace(/(<main\b[^>]*>)[\s\S]*(<\/main>)/, (_m, open: string, close: string) => `${open}${main}${close}`);
}
