import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { COPY_RULES, type CopyRule } from './rules.js';

/**
 * The copy check (`npm run lint:copy`): reads every text a visitor or a recipient can be shown —
 * the string literals and JSX text of the page, e-mail and legend sources — and flags the wording
 * of rules.ts. Comments and identifiers are not texts and are not read.
 *
 * A finding is waived line by line, with a written reason, by a comment on the line of the text or
 * on the line above it:
 *     // copy-check-waiver: <rule id> — <reason, at least a few words>
 * (in JSX: {/* copy-check-waiver: … *\/}). A waiver without a reason, for an unknown rule, or that
 * waives nothing is itself a finding. The report lists every waiver used, with its reason.
 */

/** The sources of every page text, e-mail template and legend, relative to the repository. */
export const COPY_SOURCES = [
  'src/shared/site/content.ts',
  'src/shared/waitlist/signup-contract.ts',
  'src/shared/waitlist/consent-contract.ts',
  'src/web/pages',
  'src/web/site',
  'src/web/waitlist',
  'src/server/consent/emails',
  'src/shared/lists/contract.ts',
  'src/server/lists/page.ts',
];

export interface Finding {
  file: string;
  line: number;
  rule: CopyRule;
  text: string;
}

export interface Waived extends Finding {
  waiverReason: string;
}

export interface WaiverProblem {
  file: string;
  line: number;
  problem: string;
}

export interface CopyReport {
  files: number;
  texts: number;
  findings: Finding[];
  waived: Waived[];
  waiverProblems: WaiverProblem[];
}

interface Waiver {
  line: number;
  rule: string;
  reason: string;
  used: boolean;
}

const WAIVER = /copy-check-waiver:\s*([A-Za-z0-9-]*)\s*(?:[—–:-]\s*)?(.*?)\s*(?:\*\/\s*\}?)?\s*$/u;
const MIN_REASON_WORDS = 3;

/** Files of the sources (directories walked), .ts and .tsx, tests left out. */
export function expandSources(root: string, sources: readonly string[]): string[] {
  const files: string[] = [];
  const visit = (full: string) => {
    const stat = fs.statSync(full);
    if (stat.isDirectory()) {
      for (const name of fs.readdirSync(full).sort()) visit(path.join(full, name));
    } else if (/\.tsx?$/.test(full) && !/\.test\.tsx?$/.test(full) && !full.endsWith('.d.ts')) {
      files.push(full);
    }
  };
  for (const source of sources) visit(path.resolve(root, source));
  return files;
}

/** The texts of one source file: string literals, template parts and JSX text, with their (1-based) lines. */
export function textsOf(fileName: string, source: string): Array<{ line: number; text: string }> {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true, fileName.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const texts: Array<{ line: number; text: string }> = [];
  const add = (node: ts.Node, text: string) => {
    if (text.trim() === '') return;
    texts.push({ line: file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1, text });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) return;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isJsxText(node)) add(node, node.text);
    else if (ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) add(node, node.text);
    ts.forEachChild(node, visit);
  };
  visit(file);
  return texts;
}

function waiversOf(source: string): Waiver[] {
  const waivers: Waiver[] = [];
  source.split('\n').forEach((text, i) => {
    const match = WAIVER.exec(text);
    if (match) waivers.push({ line: i + 1, rule: match[1] ?? '', reason: (match[2] ?? '').trim(), used: false });
  });
  return waivers;
}

/** Checks one file's texts against the rules; `display` names it in the report. */
export function checkSource(display: string, fileName: string, source: string, report: CopyReport): void {
  const waivers = waiversOf(source);
  report.files++;
  for (const { line, text } of textsOf(fileName, source)) {
    report.texts++;
    for (const rule of COPY_RULES) {
      if (!rule.pattern.test(text)) continue;
      const finding = { file: display, line, rule, text };
      const waiver = waivers.find((w) => w.rule === rule.id && (w.line === line || w.line === line - 1));
      if (waiver && waiver.reason.split(/\s+/).filter(Boolean).length >= MIN_REASON_WORDS) {
        waiver.used = true;
        report.waived.push({ ...finding, waiverReason: waiver.reason });
      } else {
        report.findings.push(finding);
      }
    }
  }
  for (const waiver of waivers) {
    if (!COPY_RULES.some((r) => r.id === waiver.rule)) report.waiverProblems.push({ file: display, line: waiver.line, problem: `unknown rule "${waiver.rule}"` });
    else if (waiver.reason.split(/\s+/).filter(Boolean).length < MIN_REASON_WORDS)
      report.waiverProblems.push({ file: display, line: waiver.line, problem: `the waiver of "${waiver.rule}" needs a written reason` });
    else if (!waiver.used) report.waiverProblems.push({ file: display, line: waiver.line, problem: `the waiver of "${waiver.rule}" waives nothing on this line or the next` });
  }
}

/** Checks the files (absolute paths); `root` makes the report's names relative. */
export function checkFiles(root: string, files: readonly string[]): CopyReport {
  const report: CopyReport = { files: 0, texts: 0, findings: [], waived: [], waiverProblems: [] };
  for (const file of files) checkSource(path.relative(root, file), file, fs.readFileSync(file, 'utf8'), report);
  return report;
}

const excerpt = (text: string) => JSON.stringify(text.length > 100 ? `${text.slice(0, 97)}...` : text);

/** The report as printed; `ok` is false when anything was found. */
export function formatReport(report: CopyReport): { ok: boolean; text: string } {
  const lines: string[] = [];
  for (const f of report.findings) {
    lines.push(`${f.file}:${f.line}  ${f.rule.id}  ${excerpt(f.text)}`, `    why: ${f.rule.reason}`, `    source: ${f.rule.source}`);
  }
  for (const p of report.waiverProblems) lines.push(`${p.file}:${p.line}  waiver: ${p.problem}`);
  if (report.waived.length > 0) {
    lines.push('', 'Waived (line by line, with the reason written beside the text):');
    for (const w of report.waived) lines.push(`  ${w.file}:${w.line}  ${w.rule.id}  ${excerpt(w.text)}`, `    reason: ${w.waiverReason}`);
  }
  const ok = report.findings.length === 0 && report.waiverProblems.length === 0;
  const summary = `lint:copy: ${report.texts} texts in ${report.files} files, ${COPY_RULES.length} rules: ${
    ok ? 'no finding' : `${report.findings.length} finding(s), ${report.waiverProblems.length} waiver problem(s)`
  }, ${report.waived.length} waived.`;
  return { ok, text: `${[...lines, summary].join('\n')}\n` };
}
