/**
 * The signup form on another site (issue 32 point 3): a page of an origin the operator allows
 * (EMBED_ORIGINS) includes
 *
 *   <script src="https://our.site/embed.js" async></script>
 *
 * and the form appears where the tag stands, inside a shadow root (the host page's styles cannot
 * reach it, nor its ours), with the site's own texts and legends (src/shared/site/content.ts). It
 * posts to the public signup API with CORS, which answers exactly those origins. No framework, no
 * inline style: its styles are a constructed stylesheet adopted by the shadow root, so it works
 * under a strict Content-Security-Policy that allows our origin for scripts and connections.
 *
 * It joins the portal's list: it shows the portal's texts and legends, not an offering list's
 * testing-the-waters statements, so offering lists are joined on their own page or through the
 * keyed API (the server refuses them from another site). Attribute (optional): `data-thanks-url`
 * (a page to go to once signed up; otherwise the thanks text shows in place).
 */
import { siteContent } from '../../shared/site/content.js';
import { CONSENT_FIELD, HONEYPOT_FIELD, SIGNUP_ERRORS, SIGNUP_PATH, SIGNUP_TOASTS, isSignupErrorCode } from '../../shared/waitlist/signup-contract.js';
import { UTM_FIELDS } from '../../shared/waitlist/attribution.js';
import { EMBED_CSS } from './styles.js';

type Child = Node | string | null | false;

function h<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Record<string, string | boolean> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === true) element.setAttribute(name, '');
    else if (value !== false) element.setAttribute(name, value);
  }
  for (const child of children) if (child) element.append(child);
  return element;
}

let count = 0;

/** Renders one form in place of `script` (the tag that loaded this file). */
function mount(script: HTMLScriptElement): void {
  const endpoint = new URL(SIGNUP_PATH, script.src).href;
  const thanksUrl = script.dataset.thanksUrl;
  const id = `wl-embed-${++count}`;
  const content = siteContent;

  const host = h('div', { 'data-waitlist-embed': '' });
  script.after(host);
  const root = host.attachShadow({ mode: 'open' });
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(EMBED_CSS);
  root.adoptedStyleSheets = [sheet];

  const input = h('input', { id: `${id}-email`, type: 'email', name: 'email', required: true, autocomplete: 'email', placeholder: content.form.placeholder });
  const honeypot = h('input', { type: 'text', name: HONEYPOT_FIELD, tabindex: '-1', autocomplete: 'off', id: `${id}-hp` });
  const consentBox = content.consent.checkbox === null ? null : h('input', { type: 'checkbox', id: `${id}-consent`, name: CONSENT_FIELD, required: true });
  const button = h('button', { type: 'submit', class: 'submit' }, content.form.submit);
  const status = h('p', { class: 'status', role: 'status', 'aria-live': 'polite' });
  const form = h(
    'form',
    { class: 'form', novalidate: true, 'aria-labelledby': `${id}-title` },
    h('label', { for: input.id, class: 'sr-only' }, content.form.label),
    h('div', { class: 'row' }, input, button),
    h('div', { class: 'hp', 'aria-hidden': 'true' }, h('label', { for: honeypot.id }, content.honeypotLabel), honeypot),
    consentBox && h('div', { class: 'consent' }, consentBox, h('label', { for: consentBox.id }, content.consent.checkbox ?? '')),
    status,
  );
  const footer = content.footer;
  const legal = h('a', { href: content.legalUrl, target: '_blank', rel: 'noopener noreferrer' }, footer.legalLinkText);
  root.append(
    h(
      'section',
      { class: 'embed', 'aria-labelledby': `${id}-title` },
      h('h2', { id: `${id}-title`, class: 'title' }, content.productName),
      h('p', { class: 'headline' }, `${content.headline}: ${content.subtitle}`),
      form,
      h('p', { class: 'helper' }, content.helperText),
      h(
        'div',
        { class: 'legends' },
        h('p', {}, footer.fundingPortal),
        h('p', {}, footer.noAdvice),
        h('p', {}, footer.regulationCf),
        h('p', {}, `${footer.registrationLabel}: ${content.registrationNumber} · ${footer.cityLabel}: ${content.city}`),
        h('p', {}, legal),
      ),
    ),
  );

  const say = (text: string, kind: 'error' | 'ok') => {
    status.textContent = text;
    status.className = `status ${kind}`;
  };
  const busy = (on: boolean) => {
    input.disabled = on;
    button.disabled = on;
    button.textContent = on ? content.form.submitting : content.form.submit;
  };

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const email = input.value.trim();
    if (email === '') {
      say(`${SIGNUP_TOASTS.required.title}: ${SIGNUP_TOASTS.required.description}`, 'error');
      input.focus();
      return;
    }
    if (consentBox && !consentBox.checked) {
      say(`${SIGNUP_ERRORS.consent_required.title}: ${SIGNUP_ERRORS.consent_required.message}`, 'error');
      consentBox.focus();
      return;
    }
    // Where the signup came from: the host page's campaign parameters and path (its origin, the
    // referrer, is taken by the server from the request itself).
    const params = new URLSearchParams(location.search);
    const body: Record<string, unknown> = { email, [HONEYPOT_FIELD]: honeypot.value, landing_path: location.pathname };
    for (const field of UTM_FIELDS) {
      const value = params.get(field);
      if (value) body[field] = value;
    }
    if (consentBox) body[CONSENT_FIELD] = consentBox.checked;
    busy(true);
    say('', 'ok');
    fetch(endpoint, { method: 'POST', mode: 'cors', credentials: 'omit', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
      .then(async (response) => {
        const answer = (await response.json().catch(() => null)) as { status?: string; error?: { code?: string } } | null;
        if (response.ok) {
          if (thanksUrl) {
            location.assign(thanksUrl);
            return;
          }
          const thanks = content.thanks;
          form.replaceWith(
            h(
              'div',
              { class: 'thanks', role: 'status', tabindex: '-1' },
              h('p', { class: 'thanks-title' }, thanks.title),
              h('p', {}, thanks.lead),
              answer?.status === 'pending' && h('p', {}, thanks.checkInbox),
            ),
          );
          (root.querySelector('.thanks') as HTMLElement | null)?.focus();
          return;
        }
        const code = answer?.error?.code ?? '';
        const known = isSignupErrorCode(code) ? SIGNUP_ERRORS[code] : { title: SIGNUP_TOASTS.failure.title, message: SIGNUP_TOASTS.failure.description };
        say(`${known.title}: ${known.message}`, 'error');
        busy(false);
        input.focus();
      })
      .catch(() => {
        say(`${SIGNUP_TOASTS.failure.title}: ${SIGNUP_TOASTS.failure.description}`, 'error');
        busy(false);
      });
  });
}

const current = document.currentScript;
if (current instanceof HTMLScriptElement) mount(current);
