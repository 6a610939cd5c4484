/**
 * Reads HTTP/1.1 answers off a keep-alive socket as far as the load generators need: the status,
 * the body's end (Content-Length or chunked) and whether the server closes the connection.
 * Returns the function to call with each chunk; `answered` is called once per complete answer.
 */
const HEADER_END = Buffer.from('\r\n\r\n');
const CHUNKED_END = Buffer.from('\r\n0\r\n\r\n');

export function responseReader(answered: (status: number, closeAfter: boolean) => void): (chunk: Buffer) => void {
  let pending: Buffer | null = null;
  return (chunk) => {
    pending = pending ? Buffer.concat([pending, chunk]) : chunk;
    for (;;) {
      const headerEnd = pending.indexOf(HEADER_END);
      if (headerEnd < 0) return;
      const headers = pending.toString('latin1', 0, headerEnd).toLowerCase();
      const status = Number(headers.slice(9, 12));
      const bodyStart = headerEnd + 4;
      let end: number;
      const length = /\r\ncontent-length:\s*(\d+)/.exec(headers);
      if (length) {
        end = bodyStart + Number(length[1]);
        if (pending.length < end) return;
      } else if (headers.includes('\r\ntransfer-encoding: chunked')) {
        const last = pending.indexOf(CHUNKED_END, bodyStart - 2);
        if (last < 0) return;
        end = last + CHUNKED_END.length;
      } else {
        end = bodyStart;
      }
      const rest: Buffer | null = pending.length > end ? pending.subarray(end) : null;
      pending = rest;
      answered(status, headers.includes('\r\nconnection: close'));
      if (!pending) return;
    }
  };
}
