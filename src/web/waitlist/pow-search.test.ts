import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createChallenge } from 'altcha-lib/v1';
import { searchRange, sha256Words } from './pow-search.js';

const hex = (words: Int32Array) => Array.from(words, (w) => (w >>> 0).toString(16).padStart(8, '0')).join('');

describe('the proof-of-work search', () => {
  it('computes SHA-256 as node:crypto does, across block boundaries', () => {
    for (let length = 0; length <= 200; length++) {
      const text = randomBytes(length).toString('base64').slice(0, length);
      const message = new Uint8Array(Math.ceil((length + 9) / 64) * 64 + 64);
      message.set(new TextEncoder().encode(text));
      const out = new Int32Array(8);
      sha256Words(message, length, out);
      expect(hex(out), `length ${length}`).toBe(createHash('sha256').update(text).digest('hex'));
    }
  });

  it("finds the number of altcha-lib's challenges, and nothing outside the range", async () => {
    for (let i = 0; i < 5; i++) {
      const c = await createChallenge({ hmacKey: 'key', maxnumber: 2000, expires: new Date(Date.now() + 600_000) });
      const found = searchRange(c.challenge, c.salt, 0, 2000);
      expect(found).not.toBeNull();
      expect(createHash('sha256').update(`${c.salt}${found}`).digest('hex')).toBe(c.challenge);
      expect(searchRange(c.challenge, c.salt, found! + 1, found! + 500)).toBeNull();
    }
  });
});
