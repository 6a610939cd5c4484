/**
 * The admin benchmark's view of the page: what it waits for and how it times it.
 *
 * Times are taken inside the page, on its own clock (performance.now(), 0 = the navigation's
 * start): a condition is checked once per animation frame (`waitForFunction` with `raf` polling),
 * so "shown" means in the DOM by a frame the browser could paint, and a busy main thread delays it
 * as it would delay the paint. An interaction is timed from its event's `timeStamp` (the input or
 * click as the browser received it) to that frame, so Playwright's own round trips are not counted.
 * The longest main-thread task comes from a `longtask` PerformanceObserver, reset per step.
 */
import type { Page } from '@playwright/test';

/**
 * The init script, run in every document before the app's scripts: `window.__bench` (longest task,
 * last input and click) and `window.__benchProbe(condition)`. Plain JavaScript text on purpose: a
 * function's source as tsx transpiles it may call helpers (`__name`) that do not exist in the page.
 * (An init script is injected by the browser, so the page's CSP does not apply to it.)
 */
export const PAGE_SCRIPT = String.raw`(() => {
  const bench = { longest: 0, lastInput: 0, lastClick: 0 };
  window.__bench = bench;
  // Room for every request of a step (the default buffer keeps 250 entries).
  try { performance.setResourceTimingBufferSize(100000); } catch {}
  try {
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) bench.longest = Math.max(bench.longest, entry.duration);
    }).observe({ type: 'longtask', buffered: true });
  } catch {
    // No longtask support: the longest task reads 0.
  }
  addEventListener('input', (e) => { bench.lastInput = e.timeStamp; }, true);
  addEventListener('click', (e) => { bench.lastClick = e.timeStamp; }, true);

  // The state of a Condition (admin-page.ts) now: met, failed (a text it must never show is shown), or what is still missing.
  window.__benchProbe = (condition) => {
    const problems = [];
    const text = (document.body && document.body.textContent) || '';
    // A number's text, not the end of a longer number's ("5,500 entries" is not in "15,500 entries").
    const shownAlone = (t) => {
      for (let i = text.indexOf(t); i >= 0; i = text.indexOf(t, i + 1)) if (i === 0 || !/[0-9,.]/.test(text[i - 1])) return true;
      return false;
    };
    for (const t of condition.failTexts || []) {
      if (shownAlone(t)) return { met: false, failed: 'text "' + t + '" shown', detail: '' };
    }
    if (condition.firstRow) {
      const region = document.querySelector('[role="region"][aria-label="Waitlist entries"]') || document;
      let first = null;
      for (const el of region.querySelectorAll('[role="checkbox"][aria-label^="Select "]')) {
        if (el.getAttribute('aria-label') !== 'Select all') { first = el; break; }
      }
      if (!first || first.getBoundingClientRect().height === 0) problems.push('no waitlist row rendered');
      else {
        const suffix = condition.firstRow.emailSuffix;
        const label = first.getAttribute('aria-label') || '';
        if (suffix && !label.endsWith(suffix)) problems.push('first row is "' + label + '", not one ending "' + suffix + '"');
      }
    }
    for (const alternatives of condition.texts || []) {
      if (!alternatives.some((t) => text.includes(t))) problems.push('text "' + alternatives[0] + '" not shown');
    }
    for (const t of condition.absentTexts || []) {
      if (text.includes(t)) problems.push('text "' + t + '" still shown');
    }
    if (condition.panel) {
      const heading = Array.from(document.querySelectorAll('h1, h2, h3, h4')).find((h) => (h.textContent || '').trim() === 'Insights');
      const section = (heading && heading.closest('section')) || document.querySelector('section[aria-label="Insights"]');
      if (!section) problems.push('no "Insights" section');
      else {
        // The chart (an image holding a canvas or an SVG) once drawn; without a chart (nothing to
        // draw, or it failed to load) its table alternative.
        const chart = section.querySelector('[role="img"]');
        const drawn = chart ? chart.querySelector('canvas, svg') : section.querySelector('table tbody tr');
        const sectionText = section.textContent || '';
        if (!drawn) problems.push('the Insights chart is not drawn yet');
        else if (condition.panel.words.length > 0 && !condition.panel.words.some((w) => sectionText.includes(w))) problems.push('the Insights section does not show "' + condition.panel.words[0] + '" yet');
        else if (section.getAttribute('aria-busy') === 'true' || section.querySelector('[aria-busy="true"]')) problems.push('the Insights section is busy');
      }
    }
    return { met: problems.length === 0, failed: '', detail: problems.join('; ') };
  };
})();`;

/** What PAGE_SCRIPT keeps on `window`. */
interface BenchWindow {
  __bench: { longest: number; lastInput: number; lastClick: number };
  __benchProbe(condition: Condition): { met: boolean; failed: string; detail: string };
}

// The functions below run in the page: plain arrows without inner named functions, so nothing a
// transpiler adds (`__name`) ends up in their source. The page's CSP forbids eval, so no strings.

/** The longest main-thread task (ms) since the document started or the last call; resets it. */
export async function takeLongestTask(page: Page): Promise<number> {
  const value = await page.evaluate(() => {
    const bench = (window as unknown as Partial<BenchWindow>).__bench;
    const longest = bench ? bench.longest : 0;
    if (bench) bench.longest = 0;
    return longest;
  });
  return Math.round(value);
}

/** When (page clock) the last input / click event happened. */
export async function lastEventAt(page: Page, kind: 'input' | 'click'): Promise<number> {
  return page.evaluate((k) => {
    const bench = (window as unknown as BenchWindow).__bench;
    return k === 'input' ? bench.lastInput : bench.lastClick;
  }, kind);
}

/** Which API request a step waits on: its path exactly, and text its query must not hold. */
export interface ApiRequestMatch {
  path: string;
  without?: string;
}

/**
 * How long the first matching API request started at or after `since` (page clock) took, from its
 * start to its last byte (resource timing: the server's work plus the transfer), ms; null when none.
 */
export async function apiRequestMs(page: Page, since: number, match: ApiRequestMatch): Promise<number | null> {
  return page.evaluate(
    ({ since, match }) => {
      for (const entry of performance.getEntriesByType('resource') as PerformanceResourceTiming[]) {
        if (entry.startTime < since || entry.responseEnd === 0) continue;
        const url = new URL(entry.name);
        if (url.pathname !== match.path || (match.without && url.search.includes(match.without))) continue;
        return entry.responseEnd - entry.startTime;
      }
      return null;
    },
    { since, match },
  );
}

/** Every request to `/api/` or `/auth/v1/` started at or after `since` (page clock): what, when it started and ended (ms). */
export async function apiRequestsSince(page: Page, since: number): Promise<Array<{ url: string; start: number; end: number }>> {
  return page.evaluate((since) => {
    const out: Array<{ url: string; start: number; end: number }> = [];
    for (const entry of performance.getEntriesByType('resource') as PerformanceResourceTiming[]) {
      const url = new URL(entry.name);
      if (entry.startTime < since || !(url.pathname.startsWith('/api/') || url.pathname.startsWith('/auth/v1/'))) continue;
      out.push({ url: url.pathname + url.search, start: entry.startTime, end: entry.responseEnd });
    }
    return out;
  }, since);
}

/** The document's own loading (navigation timing, page clock, ms): HTML received, DOMContentLoaded, load. */
export async function documentTiming(page: Page): Promise<{ html: number; domContentLoaded: number; load: number } | null> {
  return page.evaluate(() => {
    const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined;
    return nav ? { html: nav.responseEnd, domContentLoaded: nav.domContentLoadedEventEnd, load: nav.loadEventEnd } : null;
  });
}

/**
 * What the benchmark waits for, checked in the page. Every text may be written with or without
 * thousands separators ("1000000" or "1,000,000").
 */
export interface Condition {
  /** A waitlist row is rendered (its checkbox "Select <email>"); with `emailSuffix`, the first row's address ends so. */
  firstRow?: { emailSuffix?: string };
  /** The page's text contains one of these strings. */
  texts?: string[][];
  /** The page's text contains none of these strings. */
  absentTexts?: string[];
  /** The step fails at once if the page's text shows one of these (a count that took in another list's entries). */
  failTexts?: string[];
  /** The "Insights" section is not busy and shows its chart drawn (else its table) and one of these words (any when none). */
  panel?: { words: string[] };
}

/** "1000000" and "1,000,000". */
export function numberForms(n: number): string[] {
  const plain = String(n);
  const grouped = n.toLocaleString('en-US');
  return plain === grouped ? [plain] : [plain, grouped];
}

export class StepTimeout extends Error {}

/** A step that showed one of its condition's failTexts. */
export class StepFailed extends Error {}

/**
 * Waits until `condition` holds, checked every animation frame; resolves to the page-clock time
 * of the first frame it held. On timeout, the error names the step and what was still missing;
 * a fail text shown ends the wait at once with StepFailed.
 */
export async function shownAt(page: Page, step: string, condition: Condition, timeoutMs: number): Promise<number> {
  let outcome: { at: number; failed: string };
  try {
    const handle = await page.waitForFunction(
      (c) => {
        const probe = (window as unknown as BenchWindow).__benchProbe(c);
        return probe.met || probe.failed ? { at: performance.now(), failed: probe.failed } : false;
      },
      condition,
      { polling: 'raf', timeout: timeoutMs },
    );
    outcome = (await handle.jsonValue()) as { at: number; failed: string };
  } catch (err) {
    if (!(err instanceof Error) || err.name !== 'TimeoutError') throw err;
    const state = await page
      .evaluate((c) => (window as unknown as BenchWindow).__benchProbe(c).detail, condition)
      .catch(() => 'the page could not be read');
    throw new StepTimeout(`${step}: not shown within ${Math.round(timeoutMs / 1000)} s (${state}; page ${page.url()})`);
  }
  if (outcome.failed) throw new StepFailed(`${step}: ${outcome.failed} (page ${page.url()})`);
  return outcome.at;
}
