/**
 * The proof-of-work search (the ALTCHA protocol: the number n ≤ max with SHA-256(salt + n) equal to
 * the challenge), with SHA-256 written out for this one job: Web Crypto's digest costs a round trip
 * per call (about 15,000 numbers a second on a phone-speed CPU), this about ten times as many. The
 * message is rewritten in place number by number (a salt of ALTCHA's length and a number fit one
 * 64-byte block); the first word of each digest is compared before the rest.
 */

const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be,
  0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa,
  0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85,
  0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3,
  0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f,
  0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);
const H0 = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

/** SHA-256 of the first `length` bytes of `message` (ASCII, with room for padding after them) into `out`. */
export function sha256Words(message: Uint8Array, length: number, out: Int32Array, w: Int32Array = new Int32Array(64)): void {
  const blocks = ((length + 8) >> 6) + 1;
  message.fill(0, length, blocks * 64);
  message[length] = 0x80;
  const bits = length * 8;
  message[blocks * 64 - 4] = bits >>> 24;
  message[blocks * 64 - 3] = (bits >>> 16) & 0xff;
  message[blocks * 64 - 2] = (bits >>> 8) & 0xff;
  message[blocks * 64 - 1] = bits & 0xff;
  let h0 = H0[0]! | 0, h1 = H0[1]! | 0, h2 = H0[2]! | 0, h3 = H0[3]! | 0, h4 = H0[4]! | 0, h5 = H0[5]! | 0, h6 = H0[6]! | 0, h7 = H0[7]! | 0;
  for (let b = 0; b < blocks; b++) {
    const o = b * 64;
    for (let i = 0; i < 16; i++) {
      const j = o + i * 4;
      w[i] = (message[j]! << 24) | (message[j + 1]! << 16) | (message[j + 2]! << 8) | message[j + 3]!;
    }
    for (let i = 16; i < 64; i++) {
      const x = w[i - 15]!, y = w[i - 2]!;
      const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
      const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
      w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) | 0;
    }
    let a = h0, bb = h1, c = h2, d = h3, e = h4, f = h5, g = h6, h = h7;
    for (let i = 0; i < 64; i++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (h + S1 + ((e & f) ^ (~e & g)) + K[i]! + w[i]!) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (S0 + ((a & bb) ^ (a & c) ^ (bb & c))) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = bb;
      bb = a;
      a = (t1 + t2) | 0;
    }
    h0 = (h0 + a) | 0; h1 = (h1 + bb) | 0; h2 = (h2 + c) | 0; h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0; h5 = (h5 + f) | 0; h6 = (h6 + g) | 0; h7 = (h7 + h) | 0;
  }
  out[0] = h0; out[1] = h1; out[2] = h2; out[3] = h3; out[4] = h4; out[5] = h5; out[6] = h6; out[7] = h7;
}

/** The number in `from`..`to` (inclusive) whose SHA-256(salt + number) is `challenge` (hex), or null. */
export function searchRange(challenge: string, salt: string, from: number, to: number): number | null {
  const target = new Int32Array(8);
  for (let i = 0; i < 8; i++) target[i] = parseInt(challenge.slice(i * 8, i * 8 + 8), 16) | 0;
  const prefix = new TextEncoder().encode(salt);
  // Room for the salt, 16 digits, the padding and the length.
  const message = new Uint8Array((((prefix.length + 16 + 8) >> 6) + 1) * 64);
  message.set(prefix);
  const out = new Int32Array(8);
  const w = new Int32Array(64);
  for (let n = from; n <= to; n++) {
    const digits = String(n);
    for (let i = 0; i < digits.length; i++) message[prefix.length + i] = digits.charCodeAt(i);
    sha256Words(message, prefix.length + digits.length, out, w);
    if (out[0] !== target[0]) continue;
    let same = true;
    for (let i = 1; i < 8; i++) if (out[i] !== target[i]) same = false;
    if (same) return n;
  }
  return null;
}
