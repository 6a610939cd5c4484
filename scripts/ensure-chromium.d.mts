/**
 * Path of a usable Chromium, or null when none is installed: the full browser, or with
 * `{ headlessShell: true }` (the end-to-end tests) Chromium's headless shell when it is installed.
 */
export function findChromium(options?: { headlessShell?: boolean }): string | null;
