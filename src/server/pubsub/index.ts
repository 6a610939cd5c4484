import type { AppConfig } from '../config.js';
import type { DatabaseHandle } from '../db/database.js';
import { memoryPubSub } from './memory.js';
import { postgresPubSub } from './postgres.js';
import type { PubSub, PubSubLog } from './pubsub.js';
import { redisPubSub } from './redis.js';

export { memoryPubSub } from './memory.js';
export { LISTENER_APPLICATION_NAME, postgresPubSub } from './postgres.js';
export { DEFAULT_PUBSUB_PREFIX, redisPubSub, SUBSCRIBER_NAME_PREFIX } from './redis.js';
export { MAX_MESSAGE_BYTES, type MessageHandler, type PubSub, type PubSubLog } from './pubsub.js';

/**
 * The transport between instances, chosen once at start-up like the rate-limit store
 * (rate-limit/index.ts):
 *
 * - `REDIS_URL` set: Redis pub/sub. The deployment already runs Redis for shared state, and
 *   messages then cost the database nothing.
 * - PostgreSQL (several instances possible): LISTEN/NOTIFY on the database every instance shares;
 *   nothing else to run.
 * - SQLite (one instance by design): in memory.
 */
export function createPubSub(config: Pick<AppConfig, 'redisUrl' | 'database'>, database: DatabaseHandle, log: PubSubLog): PubSub {
  if (config.redisUrl) return redisPubSub(config.redisUrl, { log });
  if (config.database.dialect === 'postgres') {
    return postgresPubSub({ connectionString: config.database.connectionString, db: database.db, log });
  }
  return memoryPubSub({ log });
}
