/**
 * `npm run lint:copy` (run by `npm run lint`): the copy check of every page text, e-mail template
 * and legend against Rule 200(c)'s wording (scripts/copy-check/). With FILE arguments, checks those
 * files instead. Exit code 1 on any finding.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkFiles, COPY_SOURCES, expandSources, formatReport } from './copy-check/copy-check.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const files = args.length > 0 ? args.map((file) => path.resolve(file)) : expandSources(root, COPY_SOURCES);
const { ok, text } = formatReport(checkFiles(root, files));
(ok ? process.stdout : process.stderr).write(text);
process.exitCode = ok ? 0 : 1;
