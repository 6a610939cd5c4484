/**
 * Runs the benchmark's own helpers (the floor server, the load generator) as plain JavaScript:
 * under tsx they would carry its loader thread and transformer in memory and CPU, which would
 * inflate the floor's RSS and the generator's share of the two cores. Each file is transpiled
 * alone (TypeScript's transpileModule: type-only imports vanish, `.js` specifiers stay) into a
 * temporary directory whose `node_modules` links to the project's, so package imports resolve.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * Transpiles `files` (paths relative to `sourceDir`, which may lead out of it into the project, as
 * `../../src/server/geolocation/ip.ts`) into `outDir`, laid out as the project is, so relative
 * imports between them resolve; returns the directory standing for `sourceDir` in `outDir`.
 */
export function transpileFiles(sourceDir: string, files: readonly string[], outDir: string, projectRoot: string): string {
  for (const relative of files) {
    const file = path.join(sourceDir, relative);
    const { outputText } = ts.transpileModule(fs.readFileSync(file, 'utf8'), {
      fileName: file,
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
    });
    const target = path.join(outDir, path.relative(projectRoot, file)).replace(/\.ts$/, '.js');
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, outputText);
  }
  fs.writeFileSync(path.join(outDir, 'package.json'), '{ "type": "module" }\n');
  const jsDir = path.join(outDir, path.relative(projectRoot, sourceDir));
  fs.mkdirSync(jsDir, { recursive: true });
  const modules = path.join(jsDir, 'node_modules');
  if (!fs.existsSync(modules)) fs.symlinkSync(path.join(projectRoot, 'node_modules'), modules, 'dir');
  return jsDir;
}
