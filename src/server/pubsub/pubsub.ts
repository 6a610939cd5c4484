import type { FastifyBaseLogger } from 'fastify';

/** What a transport may log: outages (error) and recoveries (info). */
export type PubSubLog = Pick<FastifyBaseLogger, 'error' | 'warn' | 'info'>;

export type MessageHandler = (message: string) => void;

/**
 * Fire-and-forget messages between the instances of one deployment (every instance subscribed to a
 * channel gets every message published on it, its own included). Delivery is at most once: a
 * message published while a subscriber is disconnected is lost to it, so messages must only say
 * "something changed", never carry state that exists nowhere else.
 */
export interface PubSub {
  readonly kind: 'memory' | 'postgres' | 'redis';
  /** Rejects when the transport cannot take the message now (down, too large); the caller decides what that means. */
  publish(channel: string, message: string): Promise<void>;
  /**
   * Calls `handler` with each message published on `channel` from now on. Resolves once the
   * subscription is in place (or its first attempt failed: it is then retried in the background
   * and the failure logged); the returned function removes the handler.
   */
  subscribe(channel: string, handler: MessageHandler): Promise<() => Promise<void>>;
  /** Drops every subscription and connection; publish and subscribe reject afterwards. */
  close(): Promise<void>;
}

/**
 * The largest message any transport accepts, in UTF-8 bytes: PostgreSQL's NOTIFY payload must be
 * shorter than 8000 bytes. Every transport enforces it, so a message that works on one works on all.
 */
export const MAX_MESSAGE_BYTES = 7999;

/** PostgreSQL channel names are identifiers (at most 63 bytes); the same rule everywhere keeps them portable. */
const CHANNEL_RE = /^[a-z_][a-z0-9_]{0,62}$/;

export function checkChannel(channel: string): void {
  if (!CHANNEL_RE.test(channel)) throw new Error(`pubsub: invalid channel name "${channel}" (lower-case letters, digits and _, at most 63)`);
}

export function checkMessage(message: string): void {
  const bytes = Buffer.byteLength(message, 'utf8');
  if (bytes > MAX_MESSAGE_BYTES) throw new Error(`pubsub: message of ${bytes} bytes exceeds the ${MAX_MESSAGE_BYTES}-byte limit`);
}

/** The handlers of each channel, shared by the transports. */
export class Subscribers {
  private readonly byChannel = new Map<string, Set<MessageHandler>>();

  constructor(private readonly log: PubSubLog | undefined) {}

  /** Adds a handler; true when it is the channel's first (the transport must start listening). */
  add(channel: string, handler: MessageHandler): boolean {
    let handlers = this.byChannel.get(channel);
    const first = !handlers;
    if (!handlers) this.byChannel.set(channel, (handlers = new Set()));
    handlers.add(handler);
    return first;
  }

  /** Removes a handler; true when the channel has none left (the transport may stop listening). */
  remove(channel: string, handler: MessageHandler): boolean {
    const handlers = this.byChannel.get(channel);
    if (!handlers?.delete(handler)) return false;
    if (handlers.size > 0) return false;
    this.byChannel.delete(channel);
    return true;
  }

  channels(): string[] {
    return [...this.byChannel.keys()];
  }

  has(channel: string): boolean {
    return this.byChannel.has(channel);
  }

  /** Calls each handler of the channel; one that throws is logged and does not stop the others. */
  deliver(channel: string, message: string): void {
    const handlers = this.byChannel.get(channel);
    if (!handlers) return;
    for (const handler of [...handlers]) {
      try {
        handler(message);
      } catch (err) {
        this.log?.error({ err, channel }, 'pubsub: a message handler failed');
      }
    }
  }

  clear(): void {
    this.byChannel.clear();
  }
}

/** Reconnection delays: 200 ms doubling to at most 5 s, with ±20% jitter so instances do not reconnect in step. */
export function backoffMs(attempt: number, initialMs = 200, maxMs = 5000): number {
  const base = Math.min(maxMs, initialMs * 2 ** Math.min(attempt, 16));
  return Math.round(base * (0.8 + Math.random() * 0.4));
}
