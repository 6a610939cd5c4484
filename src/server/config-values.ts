/** The checks config.ts makes of URL and e-mail settings. */

/** The origin of an http(s) URL that names nothing but the origin (a trailing `/` is allowed), or null. */
export function parsePublicUrl(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  const bare = url.pathname === '/' && !url.search && !url.hash && !url.username && !url.password;
  return (url.protocol === 'https:' || url.protocol === 'http:') && bare ? url.origin : null;
}

/** An http(s) URL without credentials, as the URL parser writes it (href), or null. */
export function parseHttpUrl(value: string): string | null {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && !url.username && !url.password ? url.href : null;
  } catch {
    return null;
  }
}

export function isSmtpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'smtp:' || url.protocol === 'smtps:') && url.hostname !== '';
  } catch {
    return false;
  }
}

const ADDRESS = /^[^\s<>@"]+@[^\s<>@"]+\.[^\s<>@"]+$/;

/** `a@b.c` or `Display Name <a@b.c>` (the name may be quoted); no line breaks. */
export function isMailbox(value: string): boolean {
  if (/[\r\n]/.test(value)) return false;
  const named = /^(.*\S)\s*<([^<>]+)>$/.exec(value);
  return named ? ADDRESS.test(named[2]!) : ADDRESS.test(value);
}
