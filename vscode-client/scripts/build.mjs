// Bundles the extension (Node, CommonJS, `vscode` external) and the webview (browser IIFE) with
// esbuild, and the tests (Node, with `vscode` left external so that tests can stub it).
// Usage: node scripts/build.mjs [--production] [--tests] [--bench] [--dist DIR]
// (--dist: where the two bundles go, default dist/; scripts/package.sh stages a .vsix with it)
import * as esbuild from 'esbuild';
import { readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const production = process.argv.includes('--production');
const tests = process.argv.includes('--tests');
const bench = process.argv.includes('--bench');
const distArg = process.argv.indexOf('--dist');
const dist = distArg > 0 ? resolve(process.argv[distArg + 1]) : join(root, 'dist');
const common = { bundle: true, sourcemap: production ? false : 'linked', minify: production, logLevel: 'warning', absWorkingDir: root };

const builds = [
  esbuild.build({ ...common, entryPoints: ['src/extension/extension.ts'], outfile: join(dist, 'extension.js'), platform: 'node', format: 'cjs', target: 'node18', external: ['vscode'] }),
  esbuild.build({ ...common, entryPoints: ['src/webview/main.ts'], outfile: join(dist, 'webview.js'), platform: 'browser', format: 'iife', target: 'chrome114' }),
];
if (tests) {
  const dirs = ['test/unit', 'test/browser'];
  const entryPoints = dirs.flatMap((d) => readdirSync(join(root, d)).filter((f) => f.endsWith('.ts')).map((f) => `${d}/${f}`));
  builds.push(
    esbuild.build({ ...common, sourcemap: 'inline', minify: false, entryPoints, outdir: 'build/test', outbase: 'test', platform: 'node', format: 'cjs', target: 'node20', external: ['vscode', 'ajv', 'playwright-core'] }),
  );
}
if (bench) {
  builds.push(
    esbuild.build({ ...common, sourcemap: false, minify: false, entryPoints: ['bench/bench.ts'], outfile: 'build/bench/bench.js', platform: 'node', format: 'cjs', target: 'node20', external: ['playwright-core'] }),
  );
}
await Promise.all(builds);
