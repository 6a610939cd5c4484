import type { FastifyInstance } from 'fastify';
import { buildOpenApiDocument } from './openapi.js';
import { API_DOCS_PATH, API_V1_OPENAPI_PATH } from '../../shared/api/v1.js';
import { siteContent } from '../../shared/site/content.js';

/**
 * GET /api/v1/openapi.json (the generated document) and GET /api/docs: the same document as a
 * page, written on the server from it: plain HTML and one <style> element, no script and nothing
 * from another origin, so it is served under the site's Content-Security-Policy as it is.
 */
type Json = Record<string, unknown>;

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** `code` spans of the descriptions, the only markup they use. */
const prose = (text: string) =>
  escapeHtml(text)
    .split('\n\n')
    .map((paragraph) => `<p>${paragraph.replace(/`([^`]+)`/g, '<code>$1</code>')}</p>`)
    .join('');

const pretty = (value: unknown) => `<pre>${escapeHtml(JSON.stringify(value, null, 2))}</pre>`;

const STYLE = `
body{font:15px/1.5 system-ui,sans-serif;margin:0;background:#0b1120;color:#e2e8f0}
main{max-width:60rem;margin:0 auto;padding:2rem 1.25rem 4rem}
h1{font-size:1.75rem;margin:0 0 .5rem}h2{font-size:1.2rem;margin:2.5rem 0 .5rem;border-top:1px solid #334155;padding-top:1.5rem}
h3{font-size:1rem;margin:1.25rem 0 .25rem}a{color:#7dd3fc}
code,pre{font-family:ui-monospace,monospace;font-size:13px}code{background:#1e293b;padding:.1rem .3rem;border-radius:.25rem}
pre{background:#111827;border:1px solid #334155;border-radius:.5rem;padding:.75rem;overflow:auto;max-height:28rem}
.method{display:inline-block;min-width:3.5rem;font-weight:700;color:#0b1120;background:#7dd3fc;border-radius:.25rem;padding:0 .4rem;margin-right:.5rem;text-align:center}
table{border-collapse:collapse;width:100%}th,td{text-align:left;border-bottom:1px solid #334155;padding:.35rem .5rem;vertical-align:top}
nav ul{padding-left:1.25rem}`;

function operationSection(path: string, method: string, op: Json): string {
  const id = String(op.operationId);
  const parameters = (op.parameters ?? []) as Json[];
  const body = op.requestBody as { content: Record<string, { schema: unknown }> } | undefined;
  const responses = op.responses as Record<string, { description: string; content?: Record<string, { schema: unknown }> }>;
  const parts = [
    `<h2 id="${escapeHtml(id)}"><span class="method">${method.toUpperCase()}</span><code>${escapeHtml(path)}</code></h2>`,
    `<p><strong>${escapeHtml(String(op.summary))}</strong></p>`,
    prose(String(op.description)),
  ];
  if (parameters.length > 0) {
    const rows = parameters
      .map((p) => `<tr><td><code>${escapeHtml(String(p.name))}</code></td><td>${escapeHtml(String(p.in))}</td><td>${p.required ? 'yes' : 'no'}</td><td><code>${escapeHtml(JSON.stringify(p.schema))}</code></td></tr>`)
      .join('');
    parts.push(`<h3>Parameters</h3><table><thead><tr><th scope="col">Name</th><th scope="col">In</th><th scope="col">Required</th><th scope="col">Schema</th></tr></thead><tbody>${rows}</tbody></table>`);
  }
  if (body) {
    const media = Object.values(body.content)[0]!;
    parts.push(`<h3>Request body (${escapeHtml(Object.keys(body.content).join(', '))})</h3>`, pretty(media.schema));
  }
  parts.push('<h3>Responses</h3>');
  for (const [status, response] of Object.entries(responses)) {
    const media = response.content ? Object.entries(response.content)[0] : undefined;
    parts.push(`<p><code>${escapeHtml(status)}</code> ${prose(response.description).replace(/^<p>|<\/p>$/g, '')}</p>`);
    if (media && status.startsWith('2')) parts.push(pretty(media[1].schema));
  }
  return parts.join('\n');
}

export function renderApiDocsPage(document: Json): string {
  const info = document.info as { title: string; description: string };
  const paths = document.paths as Record<string, Record<string, Json>>;
  const operations = Object.entries(paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ path, method, op })));
  const nav = operations
    .map(({ path, method, op }) => `<li><a href="#${escapeHtml(String(op.operationId))}">${method.toUpperCase()} ${escapeHtml(path)}</a>: ${escapeHtml(String(op.summary))}</li>`)
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(info.title)}</title><style>${STYLE}</style></head>
<body><main>
<h1>${escapeHtml(info.title)}</h1>
${prose(info.description)}
<p>The machine-readable document: <a href="${API_V1_OPENAPI_PATH}"><code>${API_V1_OPENAPI_PATH}</code></a> (OpenAPI 3.1).</p>
<nav aria-label="Operations"><ul>${nav}</ul></nav>
${operations.map(({ path, method, op }) => operationSection(path, method, op)).join('\n')}
</main></body></html>`;
}

export async function apiDocsRoutes(app: FastifyInstance): Promise<void> {
  const document = buildOpenApiDocument({ title: siteContent.productName, serverUrl: app.config.publicUrl });
  const json = JSON.stringify(document);
  const page = renderApiDocsPage(document);
  app.get(API_V1_OPENAPI_PATH, async (_request, reply) =>
    reply.header('cache-control', 'no-cache').type('application/json; charset=utf-8').send(json),
  );
  app.get(API_DOCS_PATH, async (_request, reply) => reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(page));
}
