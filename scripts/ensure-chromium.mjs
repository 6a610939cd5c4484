#!/usr/bin/env node
// Finds a Chromium for the end-to-end tests, installs Debian's when it can, or says how to get one.
// Prints nothing but problems; exits non-zero when no browser can be had.
//
// The tests prefer Chromium's headless shell (Debian's chromium-headless-shell, what Playwright itself
// runs headless): the same engine without the full browser's UI, and about 40% less CPU for the
// suite than the full browser in headless mode (on two cores the suite is CPU-bound). The benchmarks
// keep the full browser (findChromium()), so their figures stay comparable with earlier runs.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

const candidates = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];
const HEADLESS_SHELL = '/usr/bin/chromium-headless-shell';

function playwrightManaged() {
  try {
    // Resolves the browser Playwright itself would launch, if `npx playwright install chromium` was ever run.
    const out = execFileSync(process.execPath, ['-e', "console.log(require('playwright-core').chromium.executablePath())"], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    return out && fs.existsSync(out) ? out : null;
  } catch {
    return null;
  }
}

/** The full browser (benchmarks, Lighthouse), or with `{ headlessShell: true }` the tests' choice: the shell first. */
export function findChromium({ headlessShell = false } = {}) {
  const paths = headlessShell ? [process.env.CHROMIUM_PATH, HEADLESS_SHELL, ...candidates.slice(1)] : candidates;
  for (const c of paths) if (c && fs.existsSync(c)) return c;
  return playwrightManaged();
}

function canInstallWithApt() {
  return process.platform === 'linux' && typeof process.getuid === 'function' && process.getuid() === 0 && fs.existsSync('/usr/bin/apt-get');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  let found = findChromium({ headlessShell: true });
  if (!found && canInstallWithApt()) {
    process.stderr.write('Chromium not found: installing Debian\'s chromium-headless-shell package (apt-get)...\n');
    try {
      const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
      execFileSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 'ignore', 'inherit'], env });
      execFileSync('apt-get', ['install', '-y', '-qq', 'chromium-headless-shell'], { stdio: ['ignore', 'ignore', 'inherit'], env });
    } catch {
      // Falls through to the message below.
    }
    found = findChromium({ headlessShell: true });
  }
  if (!found) {
    process.stderr.write(
      [
        'The end-to-end tests need Chromium and none was found.',
        'Install one of:',
        '  - Debian/Ubuntu: sudo apt-get install -y chromium-headless-shell   (gives /usr/bin/chromium-headless-shell)',
        '  - Playwright-managed: npx playwright install chromium',
        '  - any Chromium/Chrome binary, then: export CHROMIUM_PATH=/path/to/chromium',
        '',
      ].join('\n'),
    );
    process.exit(1);
  }
}
