import { sql, type Kysely } from 'kysely';
import type pg from 'pg';
import { optionalModule } from '../runtime/optional-module.js';
import type { Database } from '../db/schema.js';
import { backoffMs, checkChannel, checkMessage, Subscribers, type PubSub, type PubSubLog } from './pubsub.js';

/** pg, loaded only when PostgreSQL carries the pub/sub. */
const loadPg = optionalModule<typeof pg>('pg');

/** The listener's application_name, as pg_stat_activity shows it. */
export const LISTENER_APPLICATION_NAME = 'waitlist-pubsub';

export interface PostgresPubSubOptions {
  /**
   * The database's connection string. LISTEN needs a connection of its own, held open: a pooled
   * connection would stop listening as soon as it went back to the pool.
   */
  connectionString: string;
  /** The app's database: NOTIFY goes through its pool (any connection may notify). */
  db: Kysely<Database>;
  log?: PubSubLog;
  /** How often the idle listener runs a query, so a link that died silently is noticed and replaced. */
  pingIntervalMs?: number;
}

/**
 * PostgreSQL LISTEN/NOTIFY: every instance on the same database gets every message, without
 * anything but the database. The listening connection is opened on the first subscribe (an
 * instance nobody watches costs no extra connection) and, when it drops (a restart, a failover,
 * pg_terminate_backend), reopened with backoff and LISTENs again to every channel; messages
 * published in between are lost to this instance (see PubSub).
 */
export function postgresPubSub(options: PostgresPubSubOptions): PubSub {
  const { connectionString, db, log } = options;
  const pingIntervalMs = options.pingIntervalMs ?? 30_000;
  const subscribers = new Subscribers(log);

  /** The connected listener, or null while (re)connecting. */
  let client: pg.Client | null = null;
  /** The channels `client` LISTENs to, and the queue of LISTEN/UNLISTEN changes to it. */
  let listening = new Set<string>();
  let syncing: Promise<void> = Promise.resolve();
  let connecting: Promise<void> | null = null;
  let retryTimer: NodeJS.Timeout | null = null;
  let pingTimer: NodeJS.Timeout | null = null;
  let attempt = 0;
  let started = false;
  /** An outage is being reported: one error line per outage, one info line when it ends. */
  let down = false;
  let closed = false;

  function scheduleReconnect(): void {
    if (closed || retryTimer || connecting) return;
    retryTimer = setTimeout(() => {
      retryTimer = null;
      void connect();
    }, backoffMs(attempt++));
    retryTimer.unref();
  }

  /** One connection attempt; never rejects (a failure is logged and retried later). */
  function connect(): Promise<void> {
    connecting ??= connectOnce().finally(() => {
      connecting = null;
    });
    return connecting;
  }

  async function connectOnce(): Promise<void> {
    const c = new (loadPg().Client)({
      connectionString,
      application_name: LISTENER_APPLICATION_NAME,
      keepAlive: true,
      connectionTimeoutMillis: 10_000,
      // The ping (and a LISTEN) gives up after this, so a dead link is replaced rather than waited on.
      query_timeout: 10_000,
    });
    let lost = false;
    const onLost = (err?: unknown) => {
      if (lost) return;
      lost = true;
      if (client === c) client = null;
      c.end().catch(() => undefined);
      if (closed) return;
      if (!down) {
        down = true;
        log?.error({ err }, 'pubsub (postgres): listener connection lost; reconnecting (messages meanwhile are missed)');
      }
      // Outside connectOnce's promise: `connecting` is cleared first.
      setImmediate(scheduleReconnect);
    };
    // Without an error listener, a dropped idle connection would crash the process.
    c.on('error', onLost);
    c.on('end', () => onLost(new Error('connection ended')));
    c.on('notification', (n) => subscribers.deliver(n.channel, n.payload ?? ''));
    try {
      await c.connect();
      const channels = subscribers.channels();
      for (const channel of channels) await c.query(`LISTEN ${c.escapeIdentifier(channel)}`);
      if (lost) return;
      if (closed) {
        await c.end().catch(() => undefined);
        return;
      }
      client = c;
      listening = new Set(channels);
      syncing = Promise.resolve();
      attempt = 0;
      if (down) log?.info('pubsub (postgres): listener connected again');
      down = false;
      // Channels subscribed while this attempt ran.
      await sync();
    } catch (err) {
      onLost(err);
    }
  }

  /** Brings the listener's LISTENs in line with the subscribed channels, one change at a time. */
  function sync(): Promise<void> {
    const run = async () => {
      const c = client;
      if (!c) return; // the next connection LISTENs to everything
      const wanted = new Set(subscribers.channels());
      try {
        for (const channel of wanted) {
          if (listening.has(channel)) continue;
          await c.query(`LISTEN ${c.escapeIdentifier(channel)}`);
          listening.add(channel);
        }
        for (const channel of [...listening]) {
          if (wanted.has(channel)) continue;
          await c.query(`UNLISTEN ${c.escapeIdentifier(channel)}`);
          listening.delete(channel);
        }
      } catch (err) {
        // The connection is broken (or the statement timed out): replace it.
        c.emit('error', err);
      }
    };
    syncing = syncing.then(run, run);
    return syncing;
  }

  function start(): Promise<void> {
    if (!started) {
      started = true;
      pingTimer = setInterval(() => {
        const c = client;
        if (c) c.query('SELECT 1').catch((err: unknown) => c.emit('error', err));
      }, pingIntervalMs);
      pingTimer.unref();
    }
    return client ? Promise.resolve() : connecting ?? (retryTimer ? Promise.resolve() : connect());
  }

  const open = () => {
    if (closed) throw new Error('pubsub: closed');
  };

  return {
    kind: 'postgres',
    async publish(channel, message) {
      open();
      checkChannel(channel);
      checkMessage(message);
      await sql`select pg_notify(${channel}, ${message})`.execute(db);
    },
    async subscribe(channel, handler) {
      open();
      checkChannel(channel);
      subscribers.add(channel, handler);
      await start();
      await sync();
      return async () => {
        if (subscribers.remove(channel, handler)) await sync();
      };
    },
    async close() {
      if (closed) return;
      closed = true;
      if (retryTimer) clearTimeout(retryTimer);
      if (pingTimer) clearInterval(pingTimer);
      subscribers.clear();
      await connecting;
      const c = client;
      client = null;
      await c?.end().catch(() => undefined);
    },
  };
}
