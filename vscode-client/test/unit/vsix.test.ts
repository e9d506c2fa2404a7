// The packaged extension (build/dapprof.vsix, made by `vsce package` in scripts/test.sh) holds
// what VS Code needs to run it, and nothing of the sources, tests or node_modules.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { test } from 'node:test';
import { inflateRawSync } from 'node:zlib';
import { clientRoot } from '../support/reference';

/** Entries of a zip file, from its central directory. */
function readZip(file: string): Map<string, Buffer> {
  const buf = readFileSync(file);
  let eocd = buf.length - 22;
  while (eocd >= 0 && buf.readUInt32LE(eocd) !== 0x06054b50) eocd--;
  assert.ok(eocd >= 0, 'not a zip file');
  const count = buf.readUInt16LE(eocd + 10);
  let p = buf.readUInt32LE(eocd + 16);
  const out = new Map<string, Buffer>();
  for (let i = 0; i < count; i++) {
    assert.equal(buf.readUInt32LE(p), 0x02014b50);
    const method = buf.readUInt16LE(p + 10);
    const csize = buf.readUInt32LE(p + 20);
    const nameLen = buf.readUInt16LE(p + 28), extraLen = buf.readUInt16LE(p + 30), commentLen = buf.readUInt16LE(p + 32);
    const local = buf.readUInt32LE(p + 42);
    const name = buf.toString('utf8', p + 46, p + 46 + nameLen);
    const dataStart = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    const raw = buf.subarray(dataStart, dataStart + csize);
    out.set(name, method === 0 ? raw : inflateRawSync(raw));
    p += 46 + nameLen + extraLen + commentLen;
  }
  return out;
}

const vsix = process.env.DAPPROF_VSIX ?? join(clientRoot, 'build', 'dapprof.vsix');

test('the .vsix holds the manifest, both bundles, the stylesheet and the README, and no sources', { skip: !existsSync(vsix) && 'no build/dapprof.vsix: run scripts/test.sh' }, () => {
  const entries = readZip(vsix);
  const names = [...entries.keys()].sort();
  for (const n of ['extension.vsixmanifest', 'extension/package.json', 'extension/dist/extension.js', 'extension/dist/webview.js', 'extension/media/webview.css', 'extension/readme.md'])
    assert.ok(names.some((x) => x.toLowerCase() === n), `${n} in ${names.join(', ')}`);
  for (const n of names) assert.ok(!/node_modules|\/src\/|\/test\/|\.map$|\.ts$|tsconfig/.test(n), `${n} should not be packaged`);
  const pkg = JSON.parse(entries.get('extension/package.json')!.toString('utf8'));
  assert.equal(pkg.main, './dist/extension.js');
  assert.equal(pkg.contributes.debuggers[0].type, 'dapprof');
  const manifest = entries.get('extension.vsixmanifest')!.toString('utf8');
  assert.match(manifest, /Microsoft\.VisualStudio\.Code/);
  assert.match(manifest, /<Property Id="Microsoft\.VisualStudio\.Code\.Engine" Value="\^1\.90\.0"/);
  // The extension bundle is self-contained: it requires only Node built-ins and 'vscode'.
  const ext = entries.get('extension/dist/extension.js')!.toString('utf8');
  const required = new Set([...ext.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]));
  for (const r of required) assert.ok(r === 'vscode' || builtinModules.includes(r.replace(/^node:/, '')), `bundle requires ${r}`);
  assert.ok(required.has('vscode'));
  // The webview bundle defines the page and talks to the host through acquireVsCodeApi.
  const web = entries.get('extension/dist/webview.js')!.toString('utf8');
  assert.match(web, /acquireVsCodeApi/);
  assert.doesNotMatch(web, /require\(/);
});
