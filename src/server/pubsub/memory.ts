import { checkChannel, checkMessage, Subscribers, type PubSub, type PubSubLog } from './pubsub.js';

/**
 * Messages within this process only: the transport of a single instance (SQLite, which one
 * process serves by design). Delivery is asynchronous, as on the network transports, so a
 * publisher never runs its subscribers' code inside its own call.
 */
export function memoryPubSub(options: { log?: PubSubLog } = {}): PubSub {
  const subscribers = new Subscribers(options.log);
  let closed = false;
  const open = () => {
    if (closed) throw new Error('pubsub: closed');
  };
  return {
    kind: 'memory',
    async publish(channel, message) {
      open();
      checkChannel(channel);
      checkMessage(message);
      setImmediate(() => subscribers.deliver(channel, message));
    },
    async subscribe(channel, handler) {
      open();
      checkChannel(channel);
      subscribers.add(channel, handler);
      return async () => {
        subscribers.remove(channel, handler);
      };
    },
    async close() {
      closed = true;
      subscribers.clear();
    },
  };
}
