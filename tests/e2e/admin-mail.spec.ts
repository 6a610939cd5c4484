import type { Browser, Page, Route } from '@playwright/test';
import type { MailStatus, OutboxMessageView } from '../../src/shared/admin/mail-api.js';
import type { InviteResult } from '../../src/shared/admin/waitlist-api.js';
import { NO_CONSENT_RECORD, type EntryStatus, type WaitlistEntry } from '../../src/shared/waitlist/entry.js';
import { NO_ATTRIBUTION } from '../../src/shared/waitlist/attribution.js';
import { signIn } from '../support/sign-in.js';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp.js';
import { expect, sessionStorageState, test } from './fixtures.js';
import { expectNoAxeViolations, expectToast, screenshotView, startE2eServer, uniqueAdminEmail, type E2eServer } from './mfa-helpers.js';

/**
 * The admin's e-mail features (issue 9): the Status column, Invite Selected, the e-mail area with
 * the outbox. Against the e2e server (e-mail off there), a second server with e-mail on and a real
 * SMTP server, and the admin API mocked for 100,000 rows and for the outbox's states.
 */
test.describe.configure({ mode: 'serial' });

const INVITE_SUBJECT = 'Meridian Private Markets is live: your invitation';
const MAIL_OFF = 'E-mail is off: set SMTP_URL, MAIL_FROM and PUBLIC_URL to send confirmations and invites.';
const uniqueEmail = (label: string) => `${label}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.com`;

const STATUS_CYCLE: EntryStatus[] = ['joined', 'confirmed', 'pending', 'joined', 'invited', 'confirmed', 'unsubscribed', 'joined'];

function mockEntries(count: number, statusOf: (i: number) => EntryStatus = (i) => STATUS_CYCLE[i % STATUS_CYCLE.length]!): WaitlistEntry[] {
  const newest = Date.parse('2026-11-22T06:00:00Z');
  return Array.from({ length: count }, (_, i) => {
    const status = statusOf(i);
    return {
      id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      email: `mock-${i}@example.com`,
      created_at: new Date(newest - i * 60_000).toISOString(),
      ip_address: `10.0.${i % 250}.${i % 200}`,
      country: 'Germany',
      city: 'Berlin',
      region: null,
      ...NO_CONSENT_RECORD, ...NO_ATTRIBUTION,
      status,
      confirmed_at: status === 'confirmed' ? '2026-11-21T09:30:00.000Z' : null,
      invited_at: status === 'invited' ? '2026-11-21T10:00:00.000Z' : null,
      unsubscribed_at: status === 'unsubscribed' ? '2026-11-21T11:00:00.000Z' : null,
    };
  });
}

/**
 * The admin waitlist API over `entries`: pages (offset cursors), the status counts of the insights
 * (no filter), and an invite of ids or of a select-all (`filter` + `except`, no filter narrowing
 * here) that behaves like the server's (joined/confirmed become invited; the rest is counted).
 * `invites` records the ids each request covered.
 */
async function mockWaitlistApi(page: Page, entries: WaitlistEntry[], invites: string[][] = []) {
  const byId = new Map(entries.map((e) => [e.id, e]));
  // The counts are taken now, or at the newest entry if the clock is behind it.
  const asOf = () => new Date(Math.max(Date.now(), ...entries.slice(0, 1).map((e) => Date.parse(e.created_at)))).toISOString();
  await page.route(
    (url) => url.pathname === '/api/admin/waitlist',
    async (route: Route) => {
      const url = new URL(route.request().url());
      const limit = Number(url.searchParams.get('limit') ?? 1000);
      const start = Number(url.searchParams.get('cursor') ?? 0);
      const next = start + limit < entries.length ? String(start + limit) : null;
      await route.fulfill({
        json: { entries: entries.slice(start, start + limit), total: entries.length, matching: entries.length, asOf: asOf(), nextCursor: next },
      });
    },
  );
  await page.route(
    (url) => url.pathname === '/api/admin/waitlist/insights',
    async (route: Route) => {
      const statuses = (['pending', 'joined', 'confirmed', 'invited', 'unsubscribed'] as const).map((status) => ({
        status,
        count: entries.filter((e) => e.status === status).length,
      }));
      const none = { top: [], other: entries.length };
      await route.fulfill({
        json: { asOf: asOf(), total: entries.length, matching: entries.length, bucket: 'day', series: [], countries: none, sources: none, campaigns: none, statuses, confirmedShare: null, screening: [] },
      });
    },
  );
  await page.route('**/api/admin/waitlist/invite', async (route) => {
    const body = route.request().postDataJSON() as { ids: string[] } | { filter: object; except?: string[] };
    const except = new Set('except' in body ? body.except : []);
    const ids = 'ids' in body ? body.ids : entries.filter((e) => !except.has(e.id)).map((e) => e.id);
    invites.push(ids);
    const invitedAt = '2026-11-22T12:00:00.000Z';
    const result: InviteResult = { invited: 0, skipped: { pending: 0, unsubscribed: 0, alreadyInvited: 0 }, invitedAt };
    for (const id of new Set(ids)) {
      const entry = byId.get(id);
      if (!entry) continue;
      if (entry.status === 'joined' || entry.status === 'confirmed') {
        entry.status = 'invited';
        entry.invited_at = invitedAt;
        result.invited += 1;
      } else if (entry.status === 'pending') result.skipped.pending += 1;
      else if (entry.status === 'unsubscribed') result.skipped.unsubscribed += 1;
      else result.skipped.alreadyInvited += 1;
    }
    await route.fulfill({ json: result });
  });
}

const MAIL_ON: MailStatus = {
  enabled: true,
  confirmation: 'required',
  welcome: false,
  from: 'Meridian Private Markets <hello@meridian-markets.example>',
  counts: { queued: 0, sending: 0, sent: 0, failed: 0 },
};

function outboxMessage(i: number, over: Partial<OutboxMessageView> = {}): OutboxMessageView {
  const at = new Date(Date.parse('2026-11-22T11:00:00Z') - i * 90_000).toISOString();
  return {
    id: `10000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    kind: 'invite',
    to: `person-${i}@example.com`,
    subject: INVITE_SUBJECT,
    status: 'sent',
    attempts: 1,
    lastError: null,
    createdAt: at,
    nextAttemptAt: at,
    sentAt: at,
    ...over,
  };
}

/**
 * The admin e-mail API over `messages` (newest first): the status with counts taken from them, pages
 * filtered by status (offset cursors) and a retry that queues failed ones again. `calls` counts requests.
 */
async function mockMailApi(page: Page, status: MailStatus, messages: OutboxMessageView[], calls = { status: 0, outbox: 0, retry: [] as string[][] }) {
  const counts = () => {
    const c = { queued: 0, sending: 0, sent: 0, failed: 0 };
    for (const m of messages) c[m.status] += 1;
    return c;
  };
  await page.route(
    (url) => url.pathname === '/api/admin/mail',
    async (route) => {
      calls.status += 1;
      await route.fulfill({ json: status.enabled ? { ...status, counts: counts() } : status });
    },
  );
  await page.route(
    (url) => url.pathname === '/api/admin/mail/outbox',
    async (route) => {
      calls.outbox += 1;
      const url = new URL(route.request().url());
      const filter = url.searchParams.get('status');
      const limit = Number(url.searchParams.get('limit') ?? 50);
      const start = Number(url.searchParams.get('cursor') ?? 0);
      const shown = filter ? messages.filter((m) => m.status === filter) : messages;
      const next = start + limit < shown.length ? String(start + limit) : null;
      await route.fulfill({ json: { messages: shown.slice(start, start + limit), nextCursor: next } });
    },
  );
  await page.route('**/api/admin/mail/outbox/retry', async (route) => {
    const { ids } = route.request().postDataJSON() as { ids: string[] };
    calls.retry.push(ids);
    let retried = 0;
    for (const m of messages) {
      if (ids.includes(m.id) && m.status === 'failed') {
        m.status = 'queued';
        m.attempts = 0;
        retried += 1;
      }
    }
    await route.fulfill({ json: { retried } });
  });
  return calls;
}

/** A count of the e-mail area's summary, by its label. */
function countOf(page: Page, label: string) {
  return page.getByRole('region', { name: 'E-mail' }).locator('dt', { hasText: new RegExp(`^${label}$`) }).locator('xpath=following-sibling::dd[1]');
}

function row(page: Page, email: string) {
  return page.locator('tbody tr[data-index]').filter({ has: page.getByRole('checkbox', { name: `Select ${email}` }) });
}

test.describe('e-mail off (the e2e server has no SMTP_URL)', () => {
  test('the e-mail area says so, and Invite Selected is disabled with that reason', async ({ adminPage: page, request }) => {
    const email = uniqueEmail('mail-off');
    expect((await request.post('/api/waitlist', { data: { email } })).status()).toBe(201);
    await page.goto('/admin');
    await expect(page.getByRole('heading', { level: 2, name: 'E-mail' })).toBeVisible();
    await expect(page.getByRole('region', { name: 'E-mail' }).getByText(MAIL_OFF)).toBeVisible();

    // The spec's columns stay, in their order; the Status column sits beside them.
    const waitlistTable = page.getByRole('region', { name: 'Waitlist entries' });
    expect(await waitlistTable.locator('thead th').allTextContents()).toEqual(['', 'Email', 'Date Joined', 'IP Address', 'Location', 'Status', 'Source']);
    await expect(page.getByRole('columnheader', { name: 'Status' })).toBeVisible();
    await expect(row(page, email).locator('td').nth(5)).toHaveText('Joined');

    await page.getByRole('checkbox', { name: `Select ${email}` }).click();
    const invite = page.getByRole('button', { name: 'Invite Selected' });
    await expect(invite).toBeDisabled();
    await expect(invite).toHaveAccessibleDescription(MAIL_OFF);
    // Still focusable, so its reason is read; pressing it opens nothing.
    await invite.focus();
    await expect(invite).toBeFocused();
    await invite.click({ force: true });
    await expectToast(page, 'Cannot send invites', MAIL_OFF);
    await expect(page.getByRole('alertdialog')).toHaveCount(0);
    await expectNoAxeViolations(page);
    await page.getByRole('region', { name: 'Waitlist entries' }).scrollIntoViewIfNeeded();
    await screenshotView(page, 'admin-mail-off');
  });
});

test.describe('Status column and Invite Selected (mocked admin API)', () => {
  test('badges per status; the dialog counts who is invited; the toast counts who is skipped; rows update in place', async ({ adminPage: page }) => {
    test.setTimeout(60_000);
    const entries = mockEntries(16);
    const invites: string[][] = [];
    await mockWaitlistApi(page, entries, invites);
    const calls = await mockMailApi(page, MAIL_ON, [outboxMessage(0), outboxMessage(1, { kind: 'confirmation', subject: 'Confirm your email' })]);
    await page.goto('/admin');
    await expect(page.getByText('16 people signed up')).toBeVisible();

    const statusCell = (i: number) => row(page, `mock-${i}@example.com`).locator('td').nth(5);
    await expect(statusCell(0)).toHaveText('Joined');
    await expect(statusCell(1)).toHaveText('Confirmed');
    await expect(statusCell(2)).toHaveText('Pending');
    await expect(statusCell(4)).toHaveText('Invited');
    await expect(statusCell(6)).toHaveText('Unsubscribed');
    await expect(statusCell(1).locator('[title]')).toHaveAttribute('title', /^Confirmed the address on Nov 21, 2026/);

    const invite = page.getByRole('button', { name: 'Invite Selected' });
    await expect(invite).toBeDisabled();
    // The spec's buttons are where they were, Invite Selected after them.
    await expect(page.getByRole('region', { name: 'Waitlist', exact: true }).getByRole('button')).toHaveText([
      'Delete Selected',
      'Export Selected',
      'Export All',
      'Invite Selected',
    ]);

    // Select rows 0..7: 2 joined... (the cycle): 3 joined, 2 confirmed, 1 pending, 1 invited, 1 unsubscribed.
    for (let i = 0; i < 8; i++) await page.getByRole('checkbox', { name: `Select mock-${i}@example.com` }).click();
    await expect(page.getByText('16 people signed up (8 selected)')).toBeVisible();
    await expect(invite).toBeEnabled();
    await invite.click();
    const dialog = page.getByRole('alertdialog', { name: 'Invite 5 people?' });
    await expect(dialog).toContainText(
      'The launch invite e-mail will be queued for 5 of the 8 selected people, who will be marked invited. 3 people are skipped: pending, unsubscribed or already invited.',
    );
    await expect(dialog.getByRole('button', { name: 'Cancel' })).toBeFocused();
    await expectNoAxeViolations(page);
    await screenshotView(page, 'admin-invite-dialog');
    await page.keyboard.press('Escape');
    await expect(dialog).toBeHidden();
    await expect(invite).toBeFocused();
    expect(invites).toEqual([]);

    const outboxLoads = calls.outbox;
    await invite.click();
    await dialog.getByRole('button', { name: 'Send invites' }).click();
    await expectToast(page, 'Invites queued', 'Invited 5. Skipped: 1 pending, 1 unsubscribed, 1 already invited.');
    await expect(dialog).toBeHidden();
    expect(invites).toHaveLength(1);
    expect(invites[0]).toHaveLength(8);
    for (const i of [0, 1, 3, 5, 7]) await expect(statusCell(i)).toHaveText('Invited');
    await expect(statusCell(2)).toHaveText('Pending');
    await expect(statusCell(6)).toHaveText('Unsubscribed');
    await expect(statusCell(0).locator('[title]')).toHaveAttribute('title', /^Launch invite queued on Nov 22, 2026/);
    // The selection is cleared and the e-mail area reloads (its counts and list).
    await expect(page.getByText('16 people signed up', { exact: true })).toBeVisible();
    await expect.poll(() => calls.outbox).toBeGreaterThan(outboxLoads);
    await expectNoAxeViolations(page);
    await screenshotView(page, 'admin-invited');
  });

  test('a person changed since the table loaded: the counts differ and the table reloads to show it', async ({ adminPage: page }) => {
    const entries = mockEntries(4, () => 'joined');
    await mockWaitlistApi(page, entries);
    await mockMailApi(page, MAIL_ON, []);
    await page.goto('/admin');
    const statusCell = (i: number) => row(page, `mock-${i}@example.com`).locator('td').nth(5);
    await expect(statusCell(0)).toHaveText('Joined');
    // Meanwhile on the server: mock-0 unsubscribed.
    entries[0]!.status = 'unsubscribed';
    entries[0]!.unsubscribed_at = '2026-11-22T11:59:00.000Z';

    for (const i of [0, 1]) await page.getByRole('checkbox', { name: `Select mock-${i}@example.com` }).click();
    await page.getByRole('button', { name: 'Invite Selected' }).click();
    // The table still says both are joined.
    await expect(page.getByRole('alertdialog', { name: 'Invite 2 people?' })).toContainText('all 2 selected people');
    await page.getByRole('button', { name: 'Send invites' }).click();
    await expectToast(page, 'Invites queued', 'Invited 1. Skipped: 0 pending, 1 unsubscribed, 0 already invited.');
    await expect(statusCell(0)).toHaveText('Unsubscribed');
    await expect(statusCell(1)).toHaveText('Invited');
    await expect(statusCell(2)).toHaveText('Joined');
  });

  test('100,000 selected: select all and invite, with the longest main-thread task measured', async ({ adminPage: page }) => {
    test.setTimeout(180_000);
    const count = 100_000;
    // Mostly joined, with every 40th pending, every 97th unsubscribed and every 113th already invited.
    const entries = mockEntries(count, (i) => (i % 40 === 0 ? 'pending' : i % 97 === 0 ? 'unsubscribed' : i % 113 === 0 ? 'invited' : 'joined'));
    const expected = { pending: 0, unsubscribed: 0, alreadyInvited: 0 };
    for (const e of entries) {
      if (e.status === 'pending') expected.pending += 1;
      else if (e.status === 'unsubscribed') expected.unsubscribed += 1;
      else if (e.status === 'invited') expected.alreadyInvited += 1;
    }
    const invitable = count - expected.pending - expected.unsubscribed - expected.alreadyInvited;
    await page.addInitScript(() => {
      const w = window as unknown as { __longTasks: Array<{ start: number; duration: number }> };
      w.__longTasks = [];
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) w.__longTasks.push({ start: entry.startTime, duration: entry.duration });
      }).observe({ type: 'longtask', buffered: true });
    });
    await mockWaitlistApi(page, entries);
    await mockMailApi(page, MAIL_ON, []);
    await page.goto('/admin');
    await expect(page.getByText(`${count} people signed up`)).toBeVisible();
    await expect(page.getByText(/Loading more/)).toHaveCount(0, { timeout: 90_000 });

    // The long tasks of each step, from its start to the start of the next one.
    const marks: Array<[string, number]> = [];
    const mark = async (name: string) => marks.push([name, await page.evaluate(() => performance.now())]);

    await mark('select all');
    await page.getByRole('checkbox', { name: 'Select all' }).click();
    await expect(page.getByText(`${count} people signed up (${count} selected)`)).toBeVisible();

    await mark('open the dialog');
    await page.getByRole('button', { name: 'Invite Selected' }).click();
    await expect(page.getByRole('alertdialog', { name: `Invite ${invitable} people?` })).toBeVisible();

    await mark('invite (request, answer, rows updated)');
    await page.getByRole('button', { name: 'Send invites' }).click();
    await expectToast(
      page,
      'Invites queued',
      `Invited ${invitable}. Skipped: ${expected.pending} pending, ${expected.unsubscribed} unsubscribed, ${expected.alreadyInvited} already invited.`,
    );
    await expect(row(page, 'mock-1@example.com').locator('td').nth(5)).toHaveText('Invited');
    await expect(row(page, 'mock-0@example.com').locator('td').nth(5)).toHaveText('Pending');

    // The page still answers: scrolling loads further pages, whose rows show their new status.
    await mark('scroll on to row 1,001 (further pages load)');
    await page.waitForFunction(() => {
      const box = document.querySelector<HTMLElement>('[role="region"][aria-label="Waitlist entries"]')!;
      if (document.querySelector('tbody tr[data-index="1001"]') !== null) return true;
      // Virtualised: scroll on to the end until row 1,001 is loaded, then back to it.
      const shown = [...document.querySelectorAll<HTMLElement>('tbody tr[data-index]')].map((tr) => Number(tr.dataset.index));
      const row = document.querySelector<HTMLElement>('tbody tr[data-index]');
      if (Math.max(0, ...shown) < 1001 || !row) box.scrollTop = box.scrollHeight;
      else box.scrollTop = 1001 * row.offsetHeight;
      return false;
    });
    await expect(row(page, 'mock-1001@example.com').locator('td').nth(5)).toHaveText('Invited');
    await mark('end');

    const tasks = await page.evaluate(() => (window as unknown as { __longTasks: Array<{ start: number; duration: number }> }).__longTasks);
    const figures = marks.slice(0, -1).map(([name, from], i) => {
      const to = marks[i + 1]![1];
      const within = tasks.filter((t) => t.start >= from && t.start < to);
      return `${name}: ${within.length} long tasks, longest ${Math.max(0, ...within.map((t) => t.duration)).toFixed(0)} ms`;
    });
    test.info().annotations.push({ type: 'long tasks (100,000 rows)', description: figures.join('; ') });
    console.log(`[admin-mail] 100,000 rows: ${figures.join('; ')}`);
  });
});

test.describe('outbox view (mocked admin e-mail API)', () => {
  test('counts, filters, paging, a failed message with its reason retried, and retry selected', async ({ adminPage: page }) => {
    // Many steps, each checked with axe.
    test.setTimeout(90_000);
    const messages = [
      outboxMessage(0, { status: 'failed', attempts: 8, sentAt: null, lastError: '550 5.1.1 <person-0@example.com>: Recipient address rejected: User unknown' }),
      outboxMessage(1, { status: 'queued', attempts: 2, sentAt: null, lastError: '421 4.7.0 Try again later', nextAttemptAt: '2026-11-22T12:30:00.000Z' }),
      outboxMessage(2, { kind: 'confirmation', subject: 'Confirm your email for the Meridian Private Markets waitlist' }),
      outboxMessage(3, { status: 'failed', attempts: 8, sentAt: null, lastError: 'connect ECONNREFUSED 10.0.0.5:587' }),
      outboxMessage(4, { status: 'failed', attempts: 1, sentAt: null, lastError: 'Not sent: the recipient unsubscribed' }),
      ...Array.from({ length: 60 }, (_, i) => outboxMessage(5 + i)),
    ];
    await mockWaitlistApi(page, mockEntries(3));
    const calls = await mockMailApi(page, MAIL_ON, messages);
    await page.goto('/admin');
    const area = page.getByRole('region', { name: 'Outbox', exact: true });
    await expect(page.getByRole('heading', { level: 3, name: 'Outbox' })).toBeVisible();
    await expect(page.getByText('Sending as')).toBeVisible();
    await expect(page.getByText(MAIL_ON.from!)).toBeVisible();
    // The counts.
    await expect(countOf(page, 'Queued')).toHaveText('1');
    await expect(countOf(page, 'Sent')).toHaveText('61');
    await expect(countOf(page, 'Failed')).toHaveText('3');

    // All, newest first, 50 at a time.
    const outboxRows = area.locator('tbody tr');
    await expect(outboxRows).toHaveCount(50);
    await expect(outboxRows.first()).toContainText('person-0@example.com');
    await expect(outboxRows.nth(1)).toContainText('Next try');
    await expect(outboxRows.nth(1)).toContainText('421 4.7.0 Try again later');
    await expect(page.getByText('Showing 50 messages, newest first.')).toBeVisible();
    await page.getByRole('button', { name: 'Load more' }).click();
    await expect(outboxRows).toHaveCount(65);
    await expect(page.getByRole('button', { name: 'Load more' })).toHaveCount(0);
    await expectNoAxeViolations(page);

    // Failed only: the reasons and the retry buttons.
    await page.getByRole('group', { name: 'Show messages' }).getByRole('button', { name: /^Failed/ }).click();
    await expect(page.getByRole('group', { name: 'Show messages' }).getByRole('button', { name: /^Failed/ })).toHaveAttribute('aria-pressed', 'true');
    await expect(outboxRows).toHaveCount(3);
    await expect(outboxRows.first()).toContainText('550 5.1.1 <person-0@example.com>: Recipient address rejected: User unknown');
    await expect(outboxRows.first()).toContainText('8 tries');
    await expectNoAxeViolations(page);
    await area.scrollIntoViewIfNeeded();
    await screenshotView(page, 'admin-outbox-failed');

    await page.getByRole('button', { name: 'Retry the message to person-0@example.com' }).click();
    await expectToast(page, 'Queued again', '1 message will be sent again shortly.');
    expect(calls.retry).toEqual([[messages[0]!.id]]);
    await expect(outboxRows).toHaveCount(2);
    await expect(page.getByRole('heading', { level: 3, name: 'Outbox' })).toBeFocused();
    await expect(countOf(page, 'Failed')).toHaveText('2');

    // Retry selected: tick both remaining failed messages (the header box ticks every one shown).
    await page.getByRole('checkbox', { name: 'Select all failed messages shown' }).click();
    await page.getByRole('button', { name: 'Retry selected (2)' }).click();
    await expectToast(page, 'Queued again', '2 messages will be sent again shortly.');
    expect(calls.retry[1]?.slice().sort()).toEqual([messages[3]!.id, messages[4]!.id].sort());
    await expect(page.getByText('No message has failed.')).toBeVisible();
    await expect(countOf(page, 'Failed')).toHaveText('0');
    await expect(countOf(page, 'Queued')).toHaveText('4');

    // Queued now holds the three retried messages and the one waiting for its next try.
    await page.getByRole('group', { name: 'Show messages' }).getByRole('button', { name: /^Queued/ }).click();
    await expect(outboxRows).toHaveCount(4);
    await expectNoAxeViolations(page);
  });
});

test.describe('e-mail on (a second server with a real SMTP server)', () => {
  const admin = { email: uniqueAdminEmail('mail-admin'), password: 'correct horse battery staple 42' };
  let server: E2eServer;
  let smtp: TestSmtpServer;
  /** Addresses the SMTP server refuses for good (550) while true. */
  let refuse = true;

  test.beforeAll(async () => {
    smtp = await startSmtpServer({
      answer: (mail) => (refuse && mail.to.some((to) => to.startsWith('bounce-')) ? { code: 550, message: '5.1.1 Recipient address rejected: User unknown' } : undefined),
    });
    // PUBLIC_URL: the server's own origin (startE2eServer's `publicUrl`).
    server = await startE2eServer(
      {
        E2E_ADMIN_EMAIL: admin.email,
        E2E_ADMIN_PASSWORD: admin.password,
        SMTP_URL: smtp.url,
        MAIL_FROM: 'Meridian <hello@meridian-markets.example>',
        SIGNUP_RATE_LIMIT_MAX: '10000',
      },
      { publicUrl: true },
    );
  });

  test.afterAll(async () => {
    await server?.stop();
    await smtp?.close();
  });

  async function adminPageOn(browser: Browser): Promise<Page> {
    const context = await browser.newContext({ baseURL: server.baseUrl, storageState: sessionStorageState(server.baseUrl, await signIn(server.baseUrl, admin)) });
    return context.newPage();
  }

  test('invite for real: the invites reach the SMTP server, a refused one fails with its reason and is retried', async ({ browser }) => {
    test.setTimeout(90_000);
    const people = [uniqueEmail('invite-a'), uniqueEmail('invite-b'), uniqueEmail('bounce-c')];
    for (const email of people) {
      const res = await fetch(`${server.baseUrl}/api/waitlist`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email }) });
      expect(res.status).toBe(201);
    }
    const page = await adminPageOn(browser);
    try {
      await page.goto('/admin');
      await expect(page.getByText('3 people signed up')).toBeVisible();
      await expect(page.getByText('Sending as')).toBeVisible();
      for (const email of people) await expect(row(page, email).locator('td').nth(5)).toHaveText('Joined');

      await page.getByRole('checkbox', { name: 'Select all' }).click();
      await page.getByRole('button', { name: 'Invite Selected' }).click();
      await expect(page.getByRole('alertdialog', { name: 'Invite 3 people?' })).toContainText('all 3 selected people');
      await page.getByRole('button', { name: 'Send invites' }).click();
      await expectToast(page, 'Invites queued', 'Invited 3. Skipped: 0 pending, 0 unsubscribed, 0 already invited.');
      for (const email of people) await expect(row(page, email).locator('td').nth(5)).toHaveText('Invited');

      // The worker sends them; the refused one fails for good (550) with the server's words.
      await expect.poll(() => smtp.messages.map((m) => m.to).flat().sort(), { timeout: 20_000 }).toEqual(people.slice(0, 2).sort());
      for (const m of smtp.messages) expect(m.header('subject')).toBe(INVITE_SUBJECT);

      const filters = page.getByRole('group', { name: 'Show messages' });
      const area = page.getByRole('region', { name: 'Outbox', exact: true });
      const outboxRows = area.locator('tbody tr');
      // The list shows what the server knew when it loaded; the filter reloads it.
      await expect
        .poll(
          async () => {
            await filters.getByRole('button', { name: /^Sent/ }).click();
            await filters.getByRole('button', { name: /^Failed/ }).click();
            return outboxRows.count();
          },
          { timeout: 20_000 },
        )
        .toBe(1);
      const failed = outboxRows.first();
      await expect(failed).toContainText(people[2]!);
      await expect(failed).toContainText('550');
      await expect(failed).toContainText('Recipient address rejected');
      await expectNoAxeViolations(page);

      // The address is fixed on the other side: retry, and it is sent.
      refuse = false;
      await page.getByRole('button', { name: `Retry the message to ${people[2]}` }).click();
      await expectToast(page, 'Queued again', '1 message will be sent again shortly.');
      await expect.poll(() => smtp.messages.map((m) => m.to).flat(), { timeout: 20_000 }).toContain(people[2]);
      await filters.getByRole('button', { name: /^Sent/ }).click();
      await expect(outboxRows.filter({ hasText: people[2]! })).toHaveCount(1);
      await expect(outboxRows).toHaveCount(3);

      // Inviting them again sends nothing more.
      await page.getByRole('checkbox', { name: 'Select all' }).click();
      await page.getByRole('button', { name: 'Invite Selected' }).click();
      await expect(page.getByRole('alertdialog', { name: 'Invite 0 people?' })).toContainText(
        'None of the 3 selected people can be invited: they are pending, unsubscribed or already invited.',
      );
      await page.getByRole('button', { name: 'Send invites' }).click();
      await expectToast(page, 'Invites queued', 'Invited 0. Skipped: 0 pending, 0 unsubscribed, 3 already invited.');
      expect(smtp.messages).toHaveLength(3);
    } finally {
      await page.context().close();
    }
  });
});
