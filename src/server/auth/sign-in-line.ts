/**
 * The line an account's slowed-down sign-ins wait in (security review, finding 3). Once an account
 * has failed more sign-ins within the hour than one client may make, every sign-in of it waits
 * before its password is checked (signInDelayMs). A pause per request alone only slows guesses
 * made one after another: a thousand sent at once from a thousand addresses would all wait the
 * same few seconds and all be checked. In the line, the account's checks happen one at a time, each
 * after its pause, so the pause caps the account's guesses (at 5 s, 720 an hour per instance)
 * however many addresses send them.
 *
 * A sign-in whose wait would pass `maxWaitMs` is not queued but answered at once with when to come
 * back: a line without a bound would grow without one under a flood (each request holding its
 * connection past the request timeout). The client addresses the account signed in from within 30
 * days skip the line (service.ts): a stranger's flood cannot keep the owner out, and the owner's
 * own sign-in is slowed, never refused, by the account's failures.
 *
 * Per process: with several instances each has its own line.
 */
export class SignInLine {
  private readonly lines = new Map<string, { tail: Promise<void>; aheadMs: number }>();

  constructor(private readonly maxWaitMs: number) {}

  /**
   * Runs `check` after the account's earlier sign-ins in line and `pauseMs`; or, when the wait would
   * pass the bound, resolves to `{ busyForMs }` (the wait there would have been) without running it.
   */
  async run<T>(account: string, pauseMs: number, pause: (ms: number) => Promise<void>, check: () => Promise<T>): Promise<{ done: T } | { busyForMs: number }> {
    let line = this.lines.get(account);
    if (line && line.aheadMs + pauseMs > this.maxWaitMs) return { busyForMs: line.aheadMs };
    if (!line) {
      line = { tail: Promise.resolve(), aheadMs: 0 };
      this.lines.set(account, line);
    }
    const ahead = line.tail;
    let leave!: () => void;
    const mine = new Promise<void>((resolve) => (leave = resolve));
    line.tail = mine;
    line.aheadMs += pauseMs;
    try {
      await ahead;
      await pause(pauseMs);
      return { done: await check() };
    } finally {
      line.aheadMs -= pauseMs;
      leave();
      if (line.tail === mine) this.lines.delete(account);
    }
  }
}
