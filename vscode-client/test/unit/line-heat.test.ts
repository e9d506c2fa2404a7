// Line heat: the per-line and per-function own/total the editor shows, compared with a naive
// reading of the samples (test/support/reference.ts) on recorded and random streams, per thread
// and with the debugger's frames hidden; and the editor side (decorations, CodeLens, toggle,
// throttle, reveal) through the controller with the VS Code API stubbed (a real extension host
// cannot run here; the end-to-end test runs the real one).
import { CodeLens, fake, FakeDocument, FakeEditor, makeSession, resetFake, settle, startSession, Uri } from '../support/fake-vscode';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import { ProfilingController } from '../../src/extension/controller';
import { LEVELS, THROTTLE_MS } from '../../src/extension/line-heat';
import { ProfileModel } from '../../src/model/profile';
import type { ProfilingDataBody } from '../../src/model/protocol';
import { heatLevel, sourceHeat } from '../../src/model/source-heat';
import { clientRoot, randomStream, readStream, referenceSourceHeat, RefNode, toStacks } from '../support/reference';

function modelOf(bodies: ProfilingDataBody[]): ProfileModel {
  const m = new ProfileModel();
  for (const b of bodies) m.addBatch(b);
  return m;
}

/** The model's heat in the reference's shape. */
function flatHeat(model: ProfileModel, thread: number | undefined, hideDebugger: boolean) {
  const h = sourceHeat(model, thread, hideDebugger);
  const lines = new Map<string, RefNode>();
  const funcs = new Map<string, RefNode>();
  for (const [file, fh] of h.files) {
    for (const [line, l] of fh.lines) if (l.total > 0) lines.set(`${file}:${line}`, { total: l.total, self: l.own });
    for (const f of fh.functions.values()) if (f.total > 0) funcs.set(`${file}:${f.function}`, { total: f.total, self: f.own });
  }
  return { sampleCount: h.sampleCount, lines, funcs };
}

const sorted = (m: Map<string, RefNode>) => [...m].sort((a, b) => (a[0] < b[0] ? -1 : 1));

function compare(name: string, bodies: ProfilingDataBody[]): void {
  const model = modelOf(bodies);
  const threads = [undefined, ...model.threadList().map((t) => t.id)];
  for (const hide of [false, true])
    for (const thread of threads) {
      const got = flatHeat(model, thread, hide);
      const want = referenceSourceHeat(bodies, { thread, hideDebugger: hide });
      const what = `${name}, thread ${thread ?? 'all'}, hideDebugger ${hide}`;
      assert.equal(got.sampleCount, want.sampleCount, what);
      assert.deepEqual(sorted(got.lines), sorted(want.lines), `lines: ${what}`);
      assert.deepEqual(sorted(got.funcs), sorted(want.funcs), `functions: ${what}`);
    }
}

test('per-line and per-function own/total equal the naive reading of the recorded stream, per thread, with the debugger shown and hidden', () => {
  const live = readStream('live-stream.jsonl');
  compare('live-stream', live);
  compare('live-stacks-stream', readStream('live-stacks-stream.jsonl'));
  compare('live-stream as stacks', toStacks(live));
  // The recording has two frames on one line (a list comprehension and run_batches around it):
  // the line counts such a sample once, so its total is less than its frames' summed.
  const model = modelOf(live);
  const heat = sourceHeat(model, undefined, true);
  const [file, fh] = [...heat.files].find(([f]) => f.endsWith('live-app.py'))!;
  const shared = [...fh.lines].find(([, l]) => l.byFunction.size > 1);
  assert.ok(shared, 'a line of live-app.py holds two functions');
  const frames = model.table('line', undefined, 'total', Infinity, true).filter((r) => r.info.file === file && r.info.line === shared[0]);
  assert.ok(frames.length > 1 && frames.reduce((a, r) => a + r.total, 0) > shared[1].total, 'the line total is not the sum of its frames');
});

test('recursion counts a line and a function once per sample: synthetic and random streams', () => {
  compare('synthetic-stream', readStream('synthetic-stream.jsonl'));
  for (let seed = 1; seed <= 8; seed++) compare(`random ${seed}`, randomStream(seed, 12, { debugger: seed % 2 === 0, withThreads: seed !== 3 }));
  // The synthetic stream recurses: some function's total is less than the sum of its nodes'.
  const model = modelOf(readStream('synthetic-stream.jsonl'));
  const tree = model.tree('function')!;
  const sums = new Map<number, number>();
  for (const n of tree.nodes) if (n.parent) sums.set(n.key, (sums.get(n.key) ?? 0) + n.total);
  const stats = model.table('function', undefined, 'total');
  assert.ok(stats.some((r) => (sums.get(r.key) ?? 0) > r.total), 'the stream has recursion');
});

test('heat levels grow with the share and stay in range', () => {
  assert.equal(heatLevel(0, 100, LEVELS), 0);
  assert.equal(heatLevel(100, 100, LEVELS), LEVELS);
  assert.equal(heatLevel(1, 10000, LEVELS), 1);
  let prev = 1;
  for (let n = 1; n <= 1000; n++) {
    const l = heatLevel(n, 1000, LEVELS);
    assert.ok(l >= prev && l >= 1 && l <= LEVELS);
    prev = l;
  }
});

// ---- the editor --------------------------------------------------------------------------

const START_RESPONSE = { pid: 4242, pythonVersion: '3.11.2', rate: 100 };
const LIVE = readStream('live-stream.jsonl');
/** The recording's program path, where the test puts a copy of the program. */
const RECORDED = Object.values(LIVE[0].newFrames).find((f) => f.file.endsWith('live-app.py'))!.file;
const APP = readFileSync(join(clientRoot, 'test/fixtures/live-app.py'), 'utf8');

let controller: ProfilingController;
let dir: string;
beforeEach(() => {
  controller?.dispose();
  resetFake();
  controller = new ProfilingController(Uri.file('/ext') as never);
  dir = mkdtempSync(join(tmpdir(), 'lineheat-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A stream whose program file is `file`. */
function streamAt(file: string, bodies = LIVE): ProfilingDataBody[] {
  return bodies.map((b) => ({ ...b, newFrames: Object.fromEntries(Object.entries(b.newFrames).map(([id, f]) => [id, f.file === RECORDED ? { ...f, file } : f])) }));
}

async function profiling() {
  const s = makeSession('s1');
  s.answer = (command) => (command === 'startProfiling' ? START_RESPONSE : {});
  startSession(s, true);
  assert.ok(await controller.startProfiling(s as never));
  return s;
}

function feed(s: ReturnType<typeof makeSession>, bodies: ProfilingDataBody[]): void {
  for (const body of bodies) fake.onCustomEvent.fire({ session: s, event: 'profilingData', body });
}

const waitRender = () => new Promise((r) => setTimeout(r, THROTTLE_MS + 50));

/** Every decoration of an editor, by line (1-based): its level and end-of-line text. */
function decorations(editor: FakeEditor) {
  const out = new Map<number, { level: number; text: string; hover: string }>();
  for (const [id, list] of editor.decorations) {
    const level = fake.decorationTypes.findIndex((t) => t.id === id) + 1;
    for (const d of list) out.set(d.range.start.line + 1, { level, text: d.renderOptions?.after?.contentText ?? '', hover: d.hoverMessage?.value ?? '' });
  }
  return out;
}

function lenses(doc: FakeDocument): CodeLens[] {
  return fake.codeLensProviders.flatMap((p) => p.provider.provideCodeLenses(doc));
}

test('the open file gets a gutter level and "own · total" per sampled line, a CodeLens per sampled def, through a symlink too', async () => {
  const real = join(dir, 'live-app.py');
  writeFileSync(real, APP);
  symlinkSync(dir, join(dir, 'link'));
  // The daemon reports the path through a symlink and with `..`; the editor has the real path.
  const s = await profiling();
  feed(s, streamAt(join(dir, 'link', 'x', '..', 'live-app.py')));
  const doc = new FakeDocument(real, APP);
  const editor = new FakeEditor(doc);
  fake.visibleTextEditors = [editor];
  fake.onVisibleEditorsChanged.fire([editor]);
  await waitRender();

  const want = referenceSourceHeat(streamAt(real), { hideDebugger: true });
  const pct = (n: number) => `${((100 * n) / want.sampleCount).toFixed(1)}%`;
  const shown = decorations(editor);
  const expected = [...want.lines].filter(([k]) => k.startsWith(`${real}:`));
  assert.ok(expected.length >= 5, 'the program has several sampled lines');
  assert.equal(shown.size, expected.length, 'one decoration per sampled line');
  for (const [k, r] of expected) {
    const line = Number(k.slice(real.length + 1));
    const d = shown.get(line);
    assert.ok(d, `line ${line} is decorated`);
    assert.equal(d.text, `${pct(r.self)} own · ${pct(r.total)} total`);
    assert.equal(d.level, heatLevel(r.total, want.sampleCount, LEVELS));
    assert.match(d.hover, /\[Show in flame graph\]\(command:dapprof\.revealInFlameGraph\?/);
  }
  // Light and dark gutter marks of each level, in the theme's colours.
  for (const t of fake.decorationTypes) {
    const o = t.options as { light: { gutterIconPath: Uri }; dark: { gutterIconPath: Uri } };
    assert.match(o.light.gutterIconPath.fsPath, /heat-\d-light\.svg$/);
    assert.match(o.dark.gutterIconPath.fsPath, /heat-\d-dark\.svg$/);
  }

  const ls = lenses(doc);
  const names = ['parse_record', 'checksum', 'run_batches', 'digest', 'hash_blocks', 'main'];
  for (const name of names) {
    const lens = ls.find((l) => l.command!.arguments![0] && (l.command!.arguments![0] as { function: string }).function === name);
    assert.ok(lens, `a CodeLens for ${name}`);
    assert.equal(APP.split('\n')[lens.range.start.line], APP.split('\n').find((l) => l.startsWith(`def ${name}(`)), `${name}'s lens is on its def`);
    const r = want.funcs.get(`${real}:${name}`)!;
    assert.equal(lens.command!.title, `$(flame) ${pct(r.self)} own · ${pct(r.total)} total`);
  }
  // No lens for what has no def (the module, the comprehension).
  assert.equal(ls.length, names.length);
});

test('the thread filter and "Hide debugger" of the panel decide the figures', async () => {
  const file = join(dir, 'live-app.py');
  writeFileSync(file, APP);
  const s = await profiling();
  const bodies = streamAt(file);
  feed(s, bodies);
  const doc = new FakeDocument(file, APP);
  const editor = new FakeEditor(doc);
  fake.visibleTextEditors = [editor];
  const panel = fake.panels[0];
  panel.receive({ type: 'ready', hideDebugger: true });
  const model = modelOf(bodies);
  const hasher = model.threadList().find((t) => t.info?.name === 'hasher')!.id;
  panel.receive({ type: 'thread', thread: hasher });
  await waitRender();
  const want = referenceSourceHeat(bodies, { thread: hasher, hideDebugger: true });
  const digestLine = APP.split('\n').findIndex((l) => l.startsWith('def digest(')) + 1;
  const lines = decorations(editor);
  const onlyHasher = [...want.lines].filter(([k]) => k.startsWith(`${file}:`)).map(([k]) => Number(k.slice(file.length + 1)));
  assert.deepEqual([...lines.keys()].sort((a, b) => a - b), onlyHasher.sort((a, b) => a - b), 'only the hasher thread\'s lines');
  assert.ok(onlyHasher.every((l) => l > digestLine - 2), 'the hasher runs digest and hash_blocks only');
  // Back to all threads, the debugger shown: the shares are of every sample.
  panel.receive({ type: 'thread', thread: null });
  panel.receive({ type: 'hideDebugger', hideDebugger: false });
  await waitRender();
  const all = referenceSourceHeat(bodies, { hideDebugger: false });
  const [k, r] = [...all.lines].find(([key]) => key.startsWith(`${file}:`))!;
  const line = Number(k.slice(file.length + 1));
  assert.equal(decorations(editor).get(line)!.text, `${((100 * r.self) / all.sampleCount).toFixed(1)}% own · ${((100 * r.total) / all.sampleCount).toFixed(1)}% total`);
});

test('batches arriving fast redraw the editor at most once per throttle interval, and the last one is shown', async () => {
  const file = join(dir, 'live-app.py');
  writeFileSync(file, APP);
  const s = await profiling();
  const bodies = streamAt(file);
  const editor = new FakeEditor(new FakeDocument(file, APP));
  fake.visibleTextEditors = [editor];
  const before = controller.lineHeat.renders;
  const t0 = Date.now();
  for (const b of bodies) {
    feed(s, [b]);
    await new Promise((r) => setTimeout(r, 20));
  }
  await waitRender();
  const elapsed = Date.now() - t0;
  const renders = controller.lineHeat.renders - before;
  assert.ok(renders >= 2, `redrawn while batches arrive (${renders})`);
  assert.ok(renders <= Math.ceil(elapsed / THROTTLE_MS) + 1, `${renders} renders in ${elapsed} ms`);
  assert.ok(bodies.length > renders * 2, 'fewer renders than batches');
  assert.equal(controller.lineHeat.sampleCount, referenceSourceHeat(bodies, { hideDebugger: true }).sampleCount, 'the last batch is in');
});

test('the toggle command and the setting turn the heat off and on; a click reveals the node in the panel', async () => {
  const file = join(dir, 'live-app.py');
  writeFileSync(file, APP);
  const s = await profiling();
  feed(s, streamAt(file));
  const doc = new FakeDocument(file, APP);
  const editor = new FakeEditor(doc);
  fake.visibleTextEditors = [editor];
  await waitRender();
  assert.ok(decorations(editor).size > 0);
  assert.equal(fake.contexts.get('dapprof.lineHeat.available'), true);
  await fake.commands.get('dapprof.toggleLineHeat')!();
  assert.deepEqual(fake.configUpdates.at(-1), ['dapprof.lineHeat.enabled', false, 1]);
  assert.equal(decorations(editor).size, 0, 'off: no decoration');
  assert.equal(lenses(doc).length, 0, 'off: no CodeLens');
  await fake.commands.get('dapprof.toggleLineHeat')!();
  assert.ok(decorations(editor).size > 0, 'on again');

  // The CodeLens's command shows the panel and asks it to reveal the function.
  const panel = fake.panels[0];
  panel.receive({ type: 'ready', hideDebugger: true });
  await settle();
  const lens = lenses(doc).find((l) => (l.command!.arguments![0] as { function: string }).function === 'checksum')!;
  await fake.commands.get(lens.command!.command)!(...lens.command!.arguments!);
  assert.deepEqual(panel.posted.at(-1), { type: 'reveal', file, function: 'checksum' });
  // The line's hover link carries the line and its function.
  const d = [...decorations(editor).values()].find((x) => x.hover.includes('digest'))!;
  const args = JSON.parse(decodeURIComponent(/revealInFlameGraph\?([^)]+)\)/.exec(d.hover)![1]));
  await fake.commands.get('dapprof.revealInFlameGraph')!(...args);
  assert.equal((panel.posted.at(-1) as { function: string }).function, 'digest');
  assert.equal(typeof (panel.posted.at(-1) as { line: number }).line, 'number');
});
