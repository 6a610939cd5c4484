import type { FastifyInstance } from 'fastify';

/**
 * Who counts the pages served (the records room, issue 30): the site routes and the script-free
 * answer pages tell it each time they send a prerendered file. It must be cheap: the landing page's
 * answer waits for it (the records room adds one to a counter in memory).
 */
export interface ServedPages {
  served(file: string): void;
}

declare module 'fastify' {
  interface FastifyInstance {
    servedPages: ServedPages;
  }
}

/** Decorates `app.servedPages` with a counter that counts nothing, until a feature sets its own with `setServedPages`. */
export function registerServedPages(app: FastifyInstance): (counter: ServedPages) => void {
  let counter: ServedPages | null = null;
  app.decorate('servedPages', { served: (file: string) => counter?.served(file) } satisfies ServedPages);
  return (next) => {
    counter = next;
  };
}
