import { z } from 'zod';
import type { z as zm } from 'zod/mini';
import { API_OPERATIONS, KEY_ERROR_CODES, type ApiOperation } from './operations.js';
import { apiErrorSchema } from '../../shared/api/v1.js';
import { API_KEY_PREFIX, API_SCOPES } from '../../shared/api/scopes.js';

/**
 * The OpenAPI 3.1 document of /api/v1, generated from the operations' zod schemas (operations.ts)
 * with zod 4's own JSON Schema writer (draft 2020-12, the dialect of OpenAPI 3.1): requests as
 * they are accepted (`io: 'input'`), answers as they are sent (`io: 'output'`). Nothing here is
 * written by hand but the words.
 */
type JsonSchema = Record<string, unknown>;

function jsonSchema(schema: zm.ZodMiniType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

/** An object schema's properties as OpenAPI parameters (`in`: query or path). */
function parameters(schema: zm.ZodMiniType, where: 'query' | 'path'): JsonSchema[] {
  const object = jsonSchema(schema, 'input');
  const properties = (object.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((object.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: where,
    required: where === 'path' || (required.has(name) && !('default' in property)),
    schema: property,
  }));
}

const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: jsonSchema(apiErrorSchema, 'output') } } });

function operationObject(op: ApiOperation): JsonSchema {
  const responses: Record<string, unknown> = {
    [op.success.status]:
      'csv' in op.success
        ? { description: op.success.description, content: { 'text/csv': { schema: { type: 'string' } } } }
        : { description: op.success.description, content: { 'application/json': { schema: jsonSchema(op.success.schema, 'output') } } },
  };
  const errors: Record<number, string> = { ...(op.scope === null ? {} : KEY_ERROR_CODES), ...op.errors };
  for (const [status, codes] of Object.entries(errors)) responses[status] = errorResponse(codes);
  const out: JsonSchema = {
    operationId: op.operationId,
    summary: op.summary,
    description: op.scope === null ? op.description : `${op.description}\n\nScope: \`${op.scope}\`.`,
    tags: [op.url.includes('/exports') ? 'exports' : op.url.includes('/signups') ? 'signups' : 'entries'],
    security: op.scope === null ? [] : [{ apiKey: [] }],
    responses,
  };
  const params = [...(op.params ? parameters(op.params, 'path') : []), ...(op.querystring ? parameters(op.querystring, 'query') : [])];
  if (params.length > 0) out.parameters = params;
  if (op.body) {
    const schema = jsonSchema(op.body, 'input');
    out.requestBody = {
      required: true,
      content: { 'application/json': { schema }, ...(op.formBody ? { 'application/x-www-form-urlencoded': { schema } } : {}) },
    };
  }
  return out;
}

/** `/api/v1/entries/:id` as OpenAPI writes it: `/api/v1/entries/{id}`. */
const openApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

export function buildOpenApiDocument(options: { title: string; serverUrl: string | null }): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of Object.values(API_OPERATIONS) as ApiOperation[]) {
    const path = (paths[openApiPath(op.url)] ??= {});
    path[op.method.toLowerCase()] = operationObject(op);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: `${options.title} API`,
      version: '1',
      description:
        `The waitlist's API for integrations. Authenticate with an API key: \`Authorization: Bearer ${API_KEY_PREFIX}…\` ` +
        `(made in /admin or with \`npm run admin -- api-keys create\`). Scopes: ${API_SCOPES.map((s) => `\`${s}\``).join(', ')}. ` +
        'Each key has its own rate limit (requests per minute, in the `x-ratelimit-*` headers). Errors are JSON `{error: {code, message}}`.',
    },
    ...(options.serverUrl ? { servers: [{ url: options.serverUrl }] } : {}),
    components: {
      securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', bearerFormat: `${API_KEY_PREFIX}…`, description: 'An API key.' } },
    },
    paths,
  };
}
