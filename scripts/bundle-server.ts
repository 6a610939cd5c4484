/**
 * Bundles the production server (decision 014): `dist/server/serve.js` becomes the server and the
 * packages it loads at start-up, minified, split by npm package (`serve.<package>.js`, a package's
 * own dependencies going with it: about 30 files) and one file for our own modules, replacing the
 * file tsc wrote for src/server/serve.ts. V8 keeps every
 * loaded module's source text and compiles from it lazily; minified, the same code takes about 8 MB
 * less of the server's heap. Run by `npm run build:server`, which has no tsc step: emitModules() below
 * writes tsc's layout of dist/ from the sources first (`npm run typecheck` checks the types).
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
import { transform } from 'rolldown/experimental';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Our sources (src/server and src/shared), emitted to dist/ in the same layout (emitModules). */
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

/** Our sources emitted as modules (tsc's layout): src/server and src/shared, as tsconfig.build.json includes them. */
const EMITTED_SOURCES = ['server', 'shared'];
const OUT = path.join(root, 'dist');

/**
 * Writes each module of src/server and src/shared to dist/ as JavaScript with its source map, the
 * layout `tsc -p tsconfig.build.json` writes (dist/server/main.js, the CLIs, the worker threads'
 * modules, what the bundle leaves outside), with the compiler options of tsconfig.build.json (target,
 * JSX). Types are stripped, not checked: `npm run typecheck` checks them, once, for the whole tree.
 * Returns how many modules it wrote.
 */
export async function emitModules(): Promise<number> {
  const sources = EMITTED_SOURCES.flatMap((dir) =>
    fs
      .readdirSync(path.join(SOURCE, dir), { recursive: true, encoding: 'utf8' })
      .filter((name) => /\.tsx?$/.test(name) && !/\.d\.ts$|\.test\.tsx?$/.test(name))
      .map((name) => path.join(SOURCE, dir, name)),
  );
  const tsconfig = path.join(root, 'tsconfig.build.json');
  await Promise.all(
    sources.map(async (source) => {
      const out = path.join(OUT, path.relative(SOURCE, source)).replace(/\.tsx?$/, '.js');
      const { code, map, errors } = await transform(source, fs.readFileSync(source, 'utf8'), { tsconfig, target: 'es2022', sourcemap: true });
      if (errors.length > 0) throw new Error(`${path.relative(root, source)}: ${errors.map((error) => error.message).join('\n')}`);
      fs.mkdirSync(path.dirname(out), { recursive: true });
      const name = path.basename(out);
      fs.writeFileSync(out, `${code}${code.endsWith('\n') ? '' : '\n'}//# sourceMappingURL=${name}.map\n`);
      fs.writeFileSync(`${out}.map`, JSON.stringify({ ...map, file: name, sources: [path.relative(path.dirname(out), source).split(path.sep).join('/')], sourcesContent: undefined }));
    }),
  );
  return sources.length;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const modules = await emitModules();
  process.stdout.write(`server modules emitted: ${modules} files in dist/server and dist/shared\n`);
  const chunks = await bundleServer();
  const bytes = chunks.reduce((sum, chunk) => sum + Buffer.byteLength(chunk.code), 0);
  process.stdout.write(`server bundled: ${chunks.length} files, ${(bytes / 1024).toFixed(0)} KiB in dist/server (${BUNDLE_ENTRY} and serve.*.js)\n`);
}
