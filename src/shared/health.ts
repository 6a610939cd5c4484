import { z } from 'zod/mini';

/** `GET /healthz`: 200 when the database answers, 503 when it does not. Never cached. */
export const HEALTH_PATH = '/healthz';

export const healthSchema = z.object({
  status: z.enum(['ok', 'unavailable']),
  database: z.enum(['sqlite', 'postgres']),
});
