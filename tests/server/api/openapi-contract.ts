import { Ajv2020 } from 'ajv/dist/2020.js';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { API_V1_OPENAPI_PATH } from '../../../src/shared/api/v1.js';

/**
 * Every /api/v1 answer a test receives, checked against the OpenAPI document the server publishes:
 * the status is one the operation declares, and the body matches that response's JSON schema
 * (validated with Ajv's draft 2020-12 validator, the dialect of OpenAPI 3.1).
 */
interface OpenApiOperation {
  parameters?: Array<{ name: string; in: string }>;
  responses: Record<string, { description: string; content?: Record<string, { schema: object }> }>;
}
export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, OpenApiOperation>>;
}

export interface OpenApiContract {
  document: OpenApiDocument;
  /** Asserts `res` is an answer `method path` (the document's template, `/api/v1/entries/{id}`) declares. */
  check(method: string, path: string, res: LightMyRequestResponse): void;
  /** How many answers were checked, per `METHOD path status`. */
  checked: Map<string, number>;
}

export async function loadContract(app: FastifyInstance): Promise<OpenApiContract> {
  const res = await app.inject({ method: 'GET', url: API_V1_OPENAPI_PATH });
  expect(res.statusCode).toBe(200);
  const document = res.json() as OpenApiDocument;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const checked = new Map<string, number>();
  return {
    document,
    checked,
    check(method, path, res) {
      const operation = document.paths[path]?.[method.toLowerCase()];
      if (!operation) throw new Error(`${method} ${path} is not in the document`);
      const response = operation.responses[String(res.statusCode)];
      if (!response) throw new Error(`${method} ${path} does not declare status ${res.statusCode} (${res.body.slice(0, 200)})`);
      const [mediaType, media] = Object.entries(response.content ?? {})[0] as [string, { schema: object }];
      expect(res.headers['content-type'], `${method} ${path} ${res.statusCode}`).toContain(mediaType);
      if (mediaType === 'application/json') {
        const validate = ajv.compile(media.schema);
        const valid = validate(res.json());
        expect(valid, `${method} ${path} ${res.statusCode}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      } else {
        expect(typeof res.body).toBe('string');
      }
      const key = `${method.toUpperCase()} ${path} ${res.statusCode}`;
      checked.set(key, (checked.get(key) ?? 0) + 1);
    },
  };
}
