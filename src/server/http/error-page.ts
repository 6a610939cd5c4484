import fs from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { SIGNUP_ERROR_FILE } from '../../shared/site/pages.js';

/**
 * The script-free HTML pages the server answers form posts with (the signup's errors, the e-mail
 * links' outcomes): a page of the web build with `{{title}}` and `{{message}}` in it, filled in here.
 */

/** Used when the build's signup error page is absent (tests, `npm run dev` without a web build). */
export const FALLBACK_ERROR_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{title}}</title>
</head>
<body>
<main>
<h1>{{title}}</h1>
<p role="alert">{{message}}</p>
<p><a href="/">Back to the waitlist</a></p>
</main>
</body>
</html>
`;

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);
}

export function renderErrorPage(template: string, title: string, message: string): string {
  // Callback replacements, so a `$` in the text is never read as a replacement pattern.
  return template.replaceAll('{{title}}', () => escapeHtml(title)).replaceAll('{{message}}', () => escapeHtml(message));
}

/**
 * The build's script-free page template (signup-error.html, `{{title}}` and `{{message}}`), read
 * once on first use; the built-in page when there is no build. Each call is a page served (app.servedPages).
 */
export function pageTemplateLoader(app: FastifyInstance, file: string = SIGNUP_ERROR_FILE): () => Promise<string> {
  const templatePath = path.join(app.config.webRoot, file);
  let template: Promise<string> | undefined;
  return () => {
    app.servedPages.served(file);
    template ??= fs.readFile(templatePath, 'utf8').catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') app.log.warn({ err, file: templatePath }, 'signup error page unreadable; using the built-in page');
      return FALLBACK_ERROR_PAGE;
    });
    return template;
  };
}
