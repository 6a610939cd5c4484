import { randomBytes } from 'node:crypto';
import type * as ioredis from 'ioredis';
import { optionalModule } from '../runtime/optional-module.js';
import { backoffMs, checkChannel, checkMessage, Subscribers, type PubSub, type PubSubLog } from './pubsub.js';

/** ioredis, loaded only when REDIS_URL is set. */
const loadIoredis = optionalModule<typeof ioredis>('ioredis');

/** Prepended to every channel, so these never collide with other users of the same Redis. */
export const DEFAULT_PUBSUB_PREFIX = 'waitlist:';

/** The subscriber connection's CLIENT SETNAME prefix (each gets a unique suffix), as CLIENT LIST shows it. */
export const SUBSCRIBER_NAME_PREFIX = 'waitlist-pubsub-';

export interface RedisPubSubOptions {
  prefix?: string;
  log?: PubSubLog;
  /** Longest wait for a TCP connection and for a PUBLISH. */
  timeoutMs?: number;
}

/**
 * Redis pub/sub: a subscriber connection (in subscribe mode it can do nothing else) opened on the
 * first subscribe, and a publisher connection. ioredis reconnects both with backoff, and the
 * subscriber subscribes again to its channels by itself (autoResubscribe). A publish never waits
 * for Redis: while it is away, publish rejects at once (no offline queue, no retry), as the
 * rate-limit store does.
 */
export function redisPubSub(url: string, options: RedisPubSubOptions = {}): PubSub {
  const prefix = options.prefix ?? DEFAULT_PUBSUB_PREFIX;
  const timeoutMs = options.timeoutMs ?? 1000;
  const log = options.log;
  const subscribers = new Subscribers(log);
  const retryStrategy = (attempt: number) => backoffMs(attempt);

  const publisher = new (loadIoredis().Redis)(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    retryStrategy,
  });
  // Subscriptions wait for the connection (offline queue, no retry limit): a SUBSCRIBE sent while
  // Redis is away takes effect when it is back. A unique name lets an operator (or a test) find it.
  const subscriber = new (loadIoredis().Redis)(url, {
    lazyConnect: true,
    maxRetriesPerRequest: null,
    connectTimeout: timeoutMs,
    connectionName: `${SUBSCRIBER_NAME_PREFIX}${randomBytes(6).toString('hex')}`,
    retryStrategy,
  });

  // One error line per outage and connection, not one per reconnect attempt; without a listener
  // ioredis would print every connection error to stderr itself.
  for (const [client, role] of [[publisher, 'publisher'], [subscriber, 'subscriber']] as const) {
    let down = false;
    client.on('error', (err: Error) => {
      if (down) return;
      down = true;
      log?.error({ err }, `pubsub (redis ${role}): connection failed; reconnecting (messages meanwhile are missed)`);
    });
    client.on('ready', () => {
      if (down) log?.info(`pubsub (redis ${role}): connected again`);
      down = false;
    });
  }
  subscriber.on('message', (channel: string, message: string) => {
    if (channel.startsWith(prefix)) subscribers.deliver(channel.slice(prefix.length), message);
  });

  const publisherConnected = publisher.connect().catch(() => undefined); // reported by the error listener
  let subscriberStarted: Promise<void> | null = null;
  let closed = false;
  const open = () => {
    if (closed) throw new Error('pubsub: closed');
  };

  /** Runs a (UN)SUBSCRIBE; waits for it only while connected, so a Redis outage never blocks the caller. */
  async function command(run: () => Promise<unknown>): Promise<void> {
    const done = run().catch((err: unknown) => {
      if (!closed) log?.error({ err }, 'pubsub (redis): subscription change failed');
    });
    if (subscriber.status === 'ready') await done;
  }

  return {
    kind: 'redis',
    async publish(channel, message) {
      open();
      checkChannel(channel);
      checkMessage(message);
      await publisherConnected;
      await publisher.publish(prefix + channel, message);
    },
    async subscribe(channel, handler) {
      open();
      checkChannel(channel);
      subscriberStarted ??= subscriber.connect().catch(() => undefined);
      await subscriberStarted;
      if (subscribers.add(channel, handler)) await command(() => subscriber.subscribe(prefix + channel));
      return async () => {
        if (subscribers.remove(channel, handler) && !closed) await command(() => subscriber.unsubscribe(prefix + channel));
      };
    },
    async close() {
      if (closed) return;
      closed = true;
      subscribers.clear();
      await Promise.all(
        [publisher, subscriber].map(async (client) => {
          if (client.status === 'ready') await client.quit().catch(() => client.disconnect());
          else client.disconnect();
        }),
      );
    },
  };
}
