/**
 * Bundles the production server (decision 014): `dist/server/serve.js` becomes the server and the
 * packages it loads at start-up, minified, split by npm package (`serve.<package>.js`, a package's
 * own dependencies going with it: about 30 files) and one file for our own modules, replacing the
 * file tsc wrote for src/server/serve.ts. V8 keeps every
 * loaded module's source text and compiles from it lazily; minified, the same code takes about 8 MB
 * less of the server's heap. Run by `npm run build:server` after tsc.
 *
 * What stays outside the bundle, loaded from tsc's output in dist/ as before:
 * - the entry, dist/server/main.js, and what it shares with the server (SHARED_WITH_ENTRY): it
 *   configures the heap before the bundle loads, and a copy in the bundle would hold other state;
 * - our modules imported with `import()` (the e-mail templates, the in-thread password estimate):
 *   loaded on first use, with their own packages, as before;
 * - the worker threads' modules, which module-worker.ts starts from their own files;
 * - EXTERNAL_PACKAGES: native addons, and the clients that only some configurations load
 *   (runtime/optional-module.ts, decision 013), loaded from node_modules when used.
 *
 * Each bundled module of ours keeps the `import.meta.url` it has in tsc's output (the chunks sit
 * in dist/server, so `new URL('./geolocation/mmdb.js', import.meta.url)` is that file's URL): paths
 * derived from it (the project root, the geolocation index, the worker threads' files) are the same
 * bundled or not. The rewrite is textual (a comment naming it is rewritten too, harmlessly); any
 * other `import.meta` property in our sources fails the build rather than pointing at a chunk.
 *
 * Pino's transports (log shipping in a worker thread, located through `__dirname`) would not work
 * from the bundle; the server configures none.
 *
 * Split by package, rather than one file: V8 parses a file in one go, and the parser's memory
 * for a 2 MB file (about 20 MB, freed in pieces glibc's allocator keeps) cost more RSS than the
 * bundle saved.
 *
 *   npx tsx scripts/bundle-server.ts
 */
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import MagicString from 'magic-string';
import { rolldown, type OutputChunk } from 'rolldown';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Our sources (src/server and src/shared), emitted by tsc to dist/ in the same layout. */
const SOURCE = path.join(root, 'src');
export const SERVER_SOURCE = path.join(root, 'src/server');
export const SERVER_OUT = path.join(root, 'dist/server');
/** The bundle's entry, in place of tsc's output of serve.ts; main.js imports it. */
export const BUNDLE_ENTRY = 'serve.js';
/** The chunks beside it: `serve.<name>.js`. */
export const CHUNK_PATTERN = /^serve\.[\w.-]+\.js(\.map)?$/;

/** Packages loaded from node_modules as they are (native addons; clients only some configurations use). */
export const EXTERNAL_PACKAGES = [
  'better-sqlite3',
  '@node-rs/argon2',
  'pg',
  'ioredis',
  'nodemailer',
  'qrcode',
  'pg-copy-streams',
  '@zxcvbn-ts/core',
  '@zxcvbn-ts/language-common',
  '@zxcvbn-ts/language-en',
] as const;

/** Our modules that main.js imports too: one instance, tsc's. Relative to src/server, as .ts. */
export const SHARED_WITH_ENTRY = ['runtime/heap.ts'] as const;

function packageOf(id: string): string | null {
  const match = /[\\/]node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)/.exec(id);
  return match ? match[1]!.replace(/\\/g, '/') : null;
}

function isExternalPackage(id: string): boolean {
  if (id.startsWith('node:') || builtinModules.includes(id)) return true;
  return EXTERNAL_PACKAGES.some((name) => id === name || id.startsWith(`${name}/`));
}

/** The path of a module of ours in tsc's output, relative to dist/server (`./geolocation/mmdb.js`, `../shared/csv.js`). */
function outputPathOf(source: string): string {
  const relative = path.relative(SERVER_SOURCE, source).split(path.sep).join('/').replace(/\.tsx?$/, '.js');
  return relative.startsWith('../') ? relative : `./${relative}`;
}

/** `import.meta.url` as the module has it in tsc's output; any other use of import.meta fails the build. */
function keepModuleUrl(code: string, id: string): { code: string; map: ReturnType<MagicString['generateMap']> } | null {
  if (!code.includes('import.meta')) return null;
  const other = /\bimport\.meta\b(?!\.url\b)/.exec(code);
  if (other) throw new Error(`${path.relative(root, id)}: only import.meta.url is kept for bundled modules (found "${code.slice(other.index, other.index + 30)}")`);
  const text = new MagicString(code);
  text.replaceAll(/\bimport\.meta\.url\b/g, `new URL(${JSON.stringify(outputPathOf(id))}, import.meta.url).href`);
  return { code: text.toString(), map: text.generateMap({ hires: true, source: id }) };
}

export async function bundleServer(): Promise<OutputChunk[]> {
  for (const name of fs.readdirSync(SERVER_OUT)) {
    if (CHUNK_PATTERN.test(name)) fs.rmSync(path.join(SERVER_OUT, name));
  }
  const shared = new Set(SHARED_WITH_ENTRY.map((file) => path.join(SERVER_SOURCE, file)));
  const bundle = await rolldown({
    input: { serve: path.join(SERVER_SOURCE, 'serve.ts') },
    platform: 'node',
    tsconfig: path.join(root, 'tsconfig.build.json'),
    external: (id) => isExternalPackage(id),
    plugins: [
      {
        name: 'server-layout',
        async resolveId(specifier, importer, options) {
          if (!importer || !specifier.startsWith('.') || !importer.startsWith(SERVER_SOURCE)) return null;
          // Rolldown's own resolution (`./x.js` to src/…/x.ts, as tsconfig's NodeNext imports read).
          const source = (await this.resolve(specifier, importer, { kind: options.kind, skipSelf: true }))?.id;
          if (!source?.startsWith(SERVER_SOURCE)) return null;
          if (shared.has(source) || options.kind === 'dynamic-import') return { id: outputPathOf(source), external: true };
          return null;
        },
        transform(code, id) {
          return id.startsWith(SOURCE) ? keepModuleUrl(code, id) : null;
        },
      },
    ],
  });
  try {
    const { output } = await bundle.write({
      dir: SERVER_OUT,
      format: 'esm',
      minify: true,
      // Function and class names as written, for logs (pino's error type is the constructor's name) and stack traces.
      keepNames: true,
      sourcemap: true,
      entryFileNames: '[name].js',
      chunkFileNames: 'serve.[name].js',
      codeSplitting: {
        groups: [{ debugName: 'package', name: (id) => packageOf(id)?.replace(/^@/, '').replace('/', '-') ?? null }],
      },
    });
    return output.filter((file): file is OutputChunk => file.type === 'chunk');
  } finally {
    await bundle.close();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const chunks = await bundleServer();
  const bytes = chunks.reduce((sum, chunk) => sum + Buffer.byteLength(chunk.code), 0);
  process.stdout.write(`server bundled: ${chunks.length} files, ${(bytes / 1024).toFixed(0)} KiB in dist/server (${BUNDLE_ENTRY} and serve.*.js)\n`);
}
