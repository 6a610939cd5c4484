import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkFiles, COPY_SOURCES, expandSources, formatReport } from '../../scripts/copy-check/copy-check.js';
import { COPY_RULES } from '../../scripts/copy-check/rules.js';
import { projectRoot } from '../../src/server/config.js';

/** `npm run lint:copy` (issue 30): Rule 200(c)'s forbidden wording in page texts, e-mail templates and legends. */

const fixture = (name: string) => path.join(projectRoot, 'tests/copy/fixtures', name);

describe('lint:copy', () => {
  it('finds each forbidden kind in a sample, one finding per rule, with its line', () => {
    const report = checkFiles(projectRoot, [fixture('forbidden-copy.ts')]);
    expect(report.findings.map((f) => f.rule.id).sort()).toEqual(COPY_RULES.map((r) => r.id).sort());
    const liquid = report.findings.find((f) => f.rule.id === 'liquid')!;
    expect(liquid).toMatchObject({ file: 'tests/copy/fixtures/forbidden-copy.ts', line: 10 });
    const { ok, text } = formatReport(report);
    expect(ok).toBe(false);
    expect(text).toContain('tests/copy/fixtures/forbidden-copy.ts:10  liquid  "Your tokens are liquid from day one."');
    expect(text).toContain('source: 17 CFR 227.501');
  });

  it('flags no word that merely contains one ("illiquid"), and catches the plural and spaced forms', () => {
    const probe = (text: string) => COPY_RULES.filter((r) => r.pattern.test(text)).map((r) => r.id);
    expect(probe('Investments are speculative, illiquid and involve a high degree of risk')).toEqual([]);
    expect(probe('There are no risks')).toEqual(['no-risk']);
    expect(probe('returns of up to 8.5 %')).toEqual(['expected-returns']);
  });

  it('takes a waiver only line by line with a written reason, and shows the reason in the report', () => {
    const report = checkFiles(projectRoot, [fixture('waived-copy.tsx')]);
    expect(report.waived.map((w) => [w.rule.id, w.line])).toEqual([
      ['liquid', 4],
      ['secondary-market', 15],
    ]);
    // The waiver without a reason waives nothing; the one with nothing under it is a problem too.
    expect(report.findings.map((f) => [f.rule.id, f.line])).toEqual([['yield', 6]]);
    expect(report.waiverProblems.map((p) => [p.line, p.problem])).toEqual([
      [5, 'the waiver of "yield" needs a written reason'],
      [7, 'the waiver of "guarantee" waives nothing on this line or the next'],
    ]);
    const { ok, text } = formatReport(report);
    expect(ok).toBe(false);
    expect(text).toContain("reason: quotes the regulator's own definition of the term, on the education page");
    expect(text).toContain('reason: the sentence says there is none, as counsel asked');
  });

  it("passes today's page texts, e-mail templates and legends", () => {
    const files = expandSources(projectRoot, COPY_SOURCES);
    expect(files.map((f) => path.relative(projectRoot, f))).toEqual(
      expect.arrayContaining(['src/shared/site/content.ts', 'src/server/consent/emails/EmailLayout.tsx', 'src/web/site/SiteFooter.tsx']),
    );
    const report = checkFiles(projectRoot, files);
    expect(formatReport(report).text).toMatch(/no finding/);
    expect(report.texts).toBeGreaterThan(300);
  });

  it('`npm run lint:copy` fails on the sample (exit code 1) and names every rule', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/lint-copy.ts', fixture('forbidden-copy.ts')], { cwd: projectRoot, encoding: 'utf8' });
    expect(run.status).toBe(1);
    for (const rule of COPY_RULES) expect(run.stderr).toContain(`  ${rule.id}  `);
  });
});
