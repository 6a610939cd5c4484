/** Path of a usable Chromium, or null when none is installed. */
export function findChromium(): string | null;
