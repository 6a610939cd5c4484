import net from 'node:net';

/** The most one read of the socket takes (the kernel hands over what has arrived, up to this). */
const READ_BYTES = 128 * 1024;

/** Takes the bytes of one read, valid only during the call; false pauses reading until `resume()`. */
export type SocketReader = (bytes: Buffer) => boolean;

/**
 * A PostgreSQL connection's socket that reads into one buffer of its own, reused for every read.
 * Node's default socket reads into a new ~64 KB buffer each time, memory outside V8's heap: a COPY
 * of a million rows is ~100 MB of reads, 1,600 such buffers, and V8 runs a full collection for
 * every ~64 MB of them (decision 012).
 *
 * Each read's bytes are copied into a Buffer of their own and pushed into the socket's readable
 * side, as Node's socket pushes its own (so 'data', `read()`, pausing and backpressure are as
 * ever), for pg to parse. While a reader has taken the reads (`takeReads`: a COPY OUT read by
 * waitlist/export-copy.ts) they go to it where they lie, and nothing is allocated.
 *
 * Only for a connection without TLS: TLS reads the socket beneath it itself (see `postgresSocket`).
 */
export class ReusedBufferSocket extends net.Socket {
  private reader: SocketReader | null;

  constructor() {
    const buffer = Buffer.allocUnsafe(READ_BYTES);
    const self: { socket?: ReusedBufferSocket } = {};
    // Node reads `onread` in the constructor as in connect() (its types list it for connect() only).
    const options: net.SocketConstructorOpts & { onread: net.OnReadOpts } = {
      onread: { buffer, callback: (n) => self.socket!.received(buffer.subarray(0, n)) },
    };
    super(options);
    self.socket = this;
    this.reader = null;
  }

  /** Whether a reader has the reads. */
  get diverted(): boolean {
    return this.reader !== null;
  }

  /** Sends the socket's reads to `reader`, in place, until `releaseReads`. */
  takeReads(reader: SocketReader): void {
    if (this.reader !== null) throw new Error('the socket is being read already');
    this.reader = reader;
  }

  /**
   * Back to the readable side, which gets a copy of `rest` first (bytes of the last read that were
   * not the reader's), and to reading if the reader had paused it. May be called by the reader.
   */
  releaseReads(rest: Buffer): void {
    this.reader = null;
    if (rest.length > 0) this.push(Buffer.from(rest));
    this.resume();
  }

  private received(bytes: Buffer): boolean {
    const reader = this.reader;
    if (reader === null) return this.push(Buffer.from(bytes));
    // A reader that let go during the call has no say in whether reading goes on.
    return reader(bytes) || this.reader === null;
  }
}

/**
 * pg's `stream` option: a ReusedBufferSocket, or Node's plain socket where the connection will use
 * TLS (which then reads the socket's handle itself, so the buffer would not be used).
 */
export function postgresSocket(config: { ssl?: unknown }): net.Socket {
  return config.ssl ? new net.Socket() : new ReusedBufferSocket();
}
