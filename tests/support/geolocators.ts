import type { Geolocator } from '../../src/server/geolocation/geolocator.js';

/** A geolocator that counts the signups that reached it (the step just before the batch). */
export function countingGeolocator() {
  let count = 0;
  const listeners: Array<() => void> = [];
  const geolocator: Geolocator = {
    lookup: async () => {
      count += 1;
      for (const l of listeners.splice(0)) l();
      return null;
    },
  };
  return {
    geolocator,
    /** Resolves once `n` signups have passed the lookup and been queued for the next batch. */
    async reached(n: number) {
      while (count < n) await new Promise<void>((resolve) => listeners.push(resolve));
      // The rest of signUp up to the batcher's queue runs in the same turn; let it finish.
      for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
    },
  };
}
