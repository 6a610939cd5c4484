#!/usr/bin/env node
// Tells whether dist/ is the production build of the sources as they are now, so that `npm test`
// builds only when it is not (CI builds once, then tests that build).
//
//   node scripts/build-stamp.mjs write   after a build: records what it was built from (dist/.build-stamp)
//   node scripts/build-stamp.mjs fresh   exits 0 if dist/ was built from exactly these files, 1 if not
//
// What a build is made from: every file git tracks or would track (untracked files not ignored),
// except the tests, the docs and CI's script, with its contents, plus the installed packages'
// lock file and the Node version. Without git, nothing is ever fresh (the build runs).
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const STAMP = path.join(root, 'dist', '.build-stamp');
/** Not inputs of the build: a change there needs no new build. */
const NOT_INPUTS = [/^tests\//, /^docs\//, /^\.ci\//, /\.md$/];
/** What a complete build leaves: a stamp beside a partly deleted dist/ is not trusted. */
const OUTPUTS = ['dist/server/main.js', 'dist/server/serve.js', 'dist/server/cli/admin.js', 'dist/web/index.html'];

function inputsDigest() {
  let listed;
  try {
    listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return null;
  }
  const hash = createHash('sha256').update(`node ${process.version}\n`);
  for (const file of [...new Set(listed.split('\0'))].filter(Boolean).sort()) {
    if (NOT_INPUTS.some((pattern) => pattern.test(file))) continue;
    const full = path.join(root, file);
    const stat = fs.lstatSync(full, { throwIfNoEntry: false });
    // A tracked file deleted in the working tree counts as absent; a link (a worktree's node_modules) by its target.
    const content = !stat ? '-' : stat.isSymbolicLink() ? `-> ${fs.readlinkSync(full)}` : stat.isFile() ? createHash('sha256').update(fs.readFileSync(full)).digest('hex') : null;
    if (content !== null) hash.update(`${file}\0${content}\n`);
  }
  return hash.digest('hex');
}

const command = process.argv[2];
if (command === 'write') {
  const digest = inputsDigest();
  if (digest) fs.writeFileSync(STAMP, `${digest}\n`);
} else if (command === 'fresh') {
  const digest = inputsDigest();
  const stamped = fs.existsSync(STAMP) ? fs.readFileSync(STAMP, 'utf8').trim() : null;
  const complete = OUTPUTS.every((file) => fs.existsSync(path.join(root, file)));
  if (digest && digest === stamped && complete) {
    console.log('dist/ is the production build of these sources');
  } else {
    console.log('dist/ is not the production build of these sources (or is incomplete)');
    process.exit(1);
  }
} else {
  console.error('usage: node scripts/build-stamp.mjs write|fresh');
  process.exit(2);
}
