import fs from 'node:fs';
import path from 'node:path';
import { strFromU8, unzipSync } from 'fflate';
import { E2E_DATA_DIR } from '../../playwright.config.js';
import { openDatabase } from '../../src/server/db/database.js';
import { findVersion, listVersions, storeVersion } from '../../src/server/records/versions.js';
import type { RecordVersionSummary } from '../../src/shared/admin/records-api.js';
import { expect, test } from './fixtures.js';
import { expectNoAxeViolations, screenshotView } from './mfa-helpers.js';

/**
 * The Records area of /admin (issue 30): the kept versions by kind with their dates, two versions of
 * one text side by side with their differences, and the examiner's bundle, against the real server.
 * A second version of the consent statement is stored in the server's database as a deployment with
 * changed words would store it.
 */
test.describe.configure({ mode: 'serial' });

test('lists the versions by kind, shows the differences of two versions, and downloads the bundle', async ({ adminPage: page }) => {
  // Three views, an axe scan and a download.
  test.setTimeout(90_000);
  const marker = `A line added for the e2e test ${Date.now()}`;
  const handle = openDatabase({ dialect: 'sqlite', filename: path.join(E2E_DATA_DIR, 'e2e.db') });
  let statement: RecordVersionSummary;
  try {
    statement = (await listVersions(handle.db)).find((v) => v.kind === 'statement')!;
    const original = (await findVersion(handle.db, statement.id))!;
    await storeVersion(handle.db, { kind: 'statement', name: 'consent', parts: { 'statement.txt': `${original.parts['statement.txt']}${marker}\n` } });
  } finally {
    await handle.close();
  }

  // The landing page is served once more, so its use is counted (and written when the list is asked for).
  await page.goto('/');
  await page.goto('/admin');
  const records = page.getByRole('region', { name: 'Records', exact: true });
  // The area is a chunk of its own, fetched when the dashboard renders: on a busy machine, give it time.
  await expect(records.getByRole('heading', { level: 2, name: 'Records' })).toBeVisible({ timeout: 30_000 });
  await expect(records.getByText(/kept unchanged for at least 5 years after its last use/)).toBeVisible({ timeout: 30_000 });

  const pages = records.getByRole('table', { name: 'Pages' });
  const landing = pages.getByRole('row').filter({ has: page.getByRole('rowheader', { name: /^index\.html v1$/ }) });
  await expect(landing).toBeVisible();
  await expect(landing.getByRole('cell').nth(1)).toHaveText(/\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/);
  await expect(records.getByRole('table', { name: 'E-mail templates' })).toHaveCount(0);
  const statements = records.getByRole('table', { name: 'Consent statement' });
  await expect(statements.getByRole('rowheader')).toHaveText([/^consent v1$/, /^consent v2$/]);

  await records.getByLabel('Text').selectOption('statement/consent');
  await expect(records.getByLabel('Older version')).toHaveValue(statement.id);
  await records.getByRole('button', { name: 'Show differences' }).click();
  const diff = records.getByTestId('version-diff');
  await expect(diff.getByRole('heading', { name: 'statement.txt' })).toBeVisible();
  await expect(diff.getByText(`added: ${marker}`)).toBeVisible();
  await expect(diff.getByText(/^v1 · stored /)).toBeVisible();
  await expect(diff.getByText(/^v2 · stored /)).toBeVisible();
  await expectNoAxeViolations(page);
  await screenshotView(page, 'admin-records');

  const today = new Date().toISOString().slice(0, 10);
  await records.getByLabel('From (UTC day)').fill(today);
  await records.getByLabel('To (UTC day)').fill(today);
  const [download] = await Promise.all([page.waitForEvent('download'), records.getByRole('button', { name: 'Download bundle' }).click()]);
  expect(download.suggestedFilename()).toBe(`records_${today}_${today}.zip`);
  const files = unzipSync(fs.readFileSync(await download.path()));
  const manifest = JSON.parse(strFromU8(files['manifest.json']!)) as { versions: Array<{ name: string; kind: string }> };
  expect(manifest.versions).toEqual(expect.arrayContaining([expect.objectContaining({ kind: 'page', name: 'index.html' })]));
  expect(strFromU8(files['SHA256SUMS']!)).toContain('  manifest.json\n');
});
