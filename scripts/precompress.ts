/**
 * Writes .br and .gz siblings of the hashed assets, so the server sends them pre-compressed
 * (@fastify/static `preCompressed`) instead of compressing on every request.
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const assetsDir = path.resolve(process.argv[2] ?? 'dist/web/assets');
const compressible = /\.(js|mjs|css|svg|json|txt|map)$/;
let count = 0;
let raw = 0;
let brotli = 0;

for (const name of fs.readdirSync(assetsDir)) {
  if (!compressible.test(name)) continue;
  const file = path.join(assetsDir, name);
  const data = fs.readFileSync(file);
  if (data.length < 1024) continue;
  const br = zlib.brotliCompressSync(data, {
    params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: data.length },
  });
  fs.writeFileSync(`${file}.br`, br);
  fs.writeFileSync(`${file}.gz`, zlib.gzipSync(data, { level: 9 }));
  count += 1;
  raw += data.length;
  brotli += br.length;
}
console.log(`precompressed ${count} assets: ${(raw / 1024).toFixed(1)} KB raw → ${(brotli / 1024).toFixed(1)} KB brotli`);
