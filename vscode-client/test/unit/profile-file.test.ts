// Profile files open in the flame graph through the custom editor, which runs a real dapprof
// (`dapprof convert FILE --format stream`) and feeds its events to the page. Only VS Code is
// stubbed (test/support/fake-vscode.ts); dapprof is the one the repository builds, or DAPPROF_BIN.
import { fake, resetFake, Uri, vscodeStub } from '../support/fake-vscode';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { activate } from '../../src/extension/extension';
import { ProfileFileEditorProvider } from '../../src/extension/profile-file';
import { ProfileModel } from '../../src/model/profile';
import type { ProfilingDataBody } from '../../src/model/protocol';
import { clientRoot, flattenModelTree, repoRoot, sortedEntries } from '../support/reference';

const DAPPROF = process.env.DAPPROF_BIN ?? join(repoRoot, 'build/default/src/dapprof');
const skip = existsSync(DAPPROF) ? false : `no dapprof at ${DAPPROF} (build it, or set DAPPROF_BIN)`;
const dir = mkdtempSync(join(tmpdir(), 'dapprof-profile-file-'));

type Posted = { type: string; bodies?: ProfilingDataBody[]; body?: ProfilingDataBody; stopped?: { summary: { sampleCount: number } }; error?: string; message?: string };

/** Opens `file` in the editor as VS Code would, the page ready at once; resolves once dapprof is done. */
async function open(file: string): Promise<Posted[]> {
  resetFake();
  fake.config = { 'dapprof.path': DAPPROF };
  activate({ subscriptions: [], extensionUri: Uri.file('/ext') } as never);
  const provider = fake.customEditors.get(ProfileFileEditorProvider.viewTypes[0]) as ProfileFileEditorProvider;
  assert.ok(provider, 'the editor is registered on activation');
  assert.equal(fake.customEditors.get(ProfileFileEditorProvider.viewTypes[1]), provider);
  const panel = vscodeStub.window.createWebviewPanel();
  const token = { onCancellationRequested: () => ({ dispose() {} }) };
  const doc = provider.openCustomDocument(Uri.file(file) as never);
  const resolving = provider.resolveCustomEditor(doc, panel as never, token as never);
  fake.panels[0].receive({ type: 'ready', hideDebugger: true });
  await resolving;
  const posted = () => fake.panels[0].posted as Posted[];
  const deadline = Date.now() + 30_000;
  while (!posted().some((m) => m.type === 'stopped' || m.type === 'error' || (m.type === 'replay' && (m.stopped || m.error)))) {
    assert.ok(Date.now() < deadline, `no end of the stream: ${JSON.stringify(posted()).slice(0, 400)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return posted();
}

/** The flame graph a collapsed file means, by line: each line's stack with its count, as paths. */
function expectedTree(text: string): Array<[string, { total: number; self: number }]> {
  const out = new Map<string, { total: number; self: number }>();
  const add = (path: string, n: number, self: boolean) => {
    const e = out.get(path) ?? { total: 0, self: 0 };
    e.total += n;
    if (self) e.self += n;
    out.set(path, e);
  };
  for (const line of text.split('\n').filter((l) => l.trim())) {
    const count = Number(line.slice(line.lastIndexOf(' ') + 1));
    const frames = line
      .slice(0, line.lastIndexOf(' '))
      .split(';')
      .map((f) => {
        const m = /^(.*) \((.*):(\d+)\)$/.exec(f)!;
        return `${m[1]}|${m[2]}|${m[3]}||`;
      });
    add('', count, false);
    frames.forEach((_, i) => add(frames.slice(0, i + 1).join(' > '), count, i === frames.length - 1));
  }
  return [...out.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

test('a collapsed file opens as the flame graph dapprof reads from it', { skip }, async () => {
  const text = ['<module> (app.py:30);main (app.py:25);compute (lib/calc.py:12) 7', '<module> (app.py:30);main (app.py:25) 2', '<module> (app.py:30);load (lib/io.py:4) 5', ''].join('\n');
  const file = join(dir, 'profile.collapsed');
  writeFileSync(file, text);
  const posted = await open(file);
  // Ready before any data: an empty replay, then the stream as dapprof wrote it.
  assert.equal(posted[0].type, 'replay');
  const bodies = posted.filter((m) => m.type === 'data').map((m) => m.body!);
  assert.ok(bodies.length > 0, 'profilingData reached the page');
  const stopped = posted.find((m) => m.type === 'stopped')!;
  assert.equal(stopped.stopped!.summary.sampleCount, 14);
  const model = new ProfileModel();
  for (const b of [...posted[0].bodies!, ...bodies]) model.addBatch(b);
  assert.deepEqual(sortedEntries(flattenModelTree(model, 'line')), expectedTree(text));
});

test('a page opened after the file was read gets all of it in one replay', { skip }, async () => {
  const file = join(dir, 'late.collapsed');
  writeFileSync(file, 'main (app.py:1);work (app.py:2) 3\n');
  await open(file);
  fake.panels[0].receive({ type: 'ready', hideDebugger: false });
  const replay = fake.panels[0].posted.at(-1) as Posted;
  assert.equal(replay.type, 'replay');
  assert.ok(replay.stopped, 'with the summary');
  const model = new ProfileModel();
  for (const b of replay.bodies!) model.addBatch(b);
  assert.equal(model.tree('line', undefined, false)!.root.total, 3);
});

test('a speedscope file that dapprof recorded opens with its threads', { skip }, async () => {
  const file = join(repoRoot, 'tests/formats/fixtures/busy.speedscope.json');
  const doc = JSON.parse(readFileSync(file, 'utf8')) as { profiles: Array<{ name: string; weights: number[] }> };
  const posted = await open(file);
  const bodies = [...(posted[0].bodies ?? []), ...posted.filter((m) => m.type === 'data').map((m) => m.body!)];
  const threads = Object.assign({}, ...bodies.map((b) => b.threads ?? {})) as Record<string, { name: string }>;
  assert.deepEqual(Object.values(threads).map((t) => t.name).sort(), doc.profiles.map((p) => p.name.slice(0, p.name.indexOf(' (thread'))).sort());
  const total = doc.profiles.reduce((a, p) => a + p.weights.reduce((x, w) => x + w, 0), 0);
  assert.equal(posted.find((m) => m.type === 'stopped')!.stopped!.summary.sampleCount, total);
});

test("a file dapprof cannot read shows dapprof's reason in the editor", { skip }, async () => {
  const file = join(dir, 'broken.collapsed');
  writeFileSync(file, 'main;work 3\nthis line has no count\n');
  const posted = await open(file);
  const error = posted.find((m) => m.type === 'error');
  assert.ok(error, JSON.stringify(posted));
  assert.match(error.message!, /broken\.collapsed: not a valid collapsed profile: line 2 is not a collapsed stack/);
  assert.doesNotMatch(error.message!, /^dapprof: error/);
});

test('the manifest offers the editor for the profile files', () => {
  const pkg = JSON.parse(readFileSync(join(clientRoot, 'package.json'), 'utf8'));
  const editors = pkg.contributes.customEditors as Array<{ viewType: string; priority: string; selector: Array<{ filenamePattern: string }> }>;
  const byPattern = new Map(editors.flatMap((e) => e.selector.map((s) => [s.filenamePattern, [e.viewType, e.priority]])));
  assert.deepEqual(byPattern.get('*.speedscope.json'), ['dapprof.profileFile', 'default']);
  assert.deepEqual(byPattern.get('*.collapsed'), ['dapprof.profileFile', 'default']);
  assert.deepEqual(byPattern.get('*.txt'), ['dapprof.profileFileOption', 'option']);
  // VS Code's own viewer stays the default of .cpuprofile.
  assert.deepEqual(byPattern.get('*.cpuprofile'), ['dapprof.profileFileOption', 'option']);
  assert.deepEqual(editors.map((e) => e.viewType), [...ProfileFileEditorProvider.viewTypes]);
  for (const v of ProfileFileEditorProvider.viewTypes) assert.ok(pkg.activationEvents.includes(`onCustomEditor:${v}`));
});

test('"Compare with a file…" reads the picked file with dapprof and makes its bodies the baseline; a bad file says why', { skip }, async () => {
  const current = join(dir, 'now.collapsed');
  writeFileSync(current, 'main (app.py:3);work (app.py:9) 6\nmain (app.py:3) 1\n');
  const earlier = join(dir, 'before.collapsed');
  writeFileSync(earlier, 'main (app.py:3);work (app.py:9) 2\nmain (app.py:3);load (app.py:5) 4\n');
  await open(current);
  const page = fake.panels[0];
  fake.openUri = Uri.file(earlier);
  const baselines = () => (page.posted as Posted[]).filter((m) => m.type === 'baseline') as Array<Posted & { label: string }>;
  page.receive({ type: 'pickBaseline' });
  const deadline = Date.now() + 30_000;
  while (baselines().length === 0) {
    assert.ok(Date.now() < deadline, 'no baseline reached the page');
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(fake.openDialogs.length, 1);
  const [baseline] = baselines();
  assert.equal(baseline.label, 'before.collapsed');
  const model = new ProfileModel();
  for (const b of baseline.bodies!) model.addBatch(b);
  assert.equal(model.totals.sampleCount, 6);
  assert.deepEqual(sortedEntries(flattenModelTree(model, 'line')), expectedTree(readFileSync(earlier, 'utf8')));

  // Not a profile: the user is told dapprof's reason, and the page keeps its baseline.
  const junk = join(dir, 'junk.txt');
  writeFileSync(junk, 'this is not a profile\n');
  fake.openUri = Uri.file(junk);
  page.receive({ type: 'pickBaseline' });
  while (fake.errors.length === 0) {
    assert.ok(Date.now() < deadline, 'no error shown');
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.match(fake.errors[0], /cannot compare with junk\.txt: .+/);
  assert.equal(baselines().length, 1);
  // Cancelled: nothing happens.
  fake.openUri = undefined;
  page.receive({ type: 'pickBaseline' });
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(baselines().length, 1);
});
