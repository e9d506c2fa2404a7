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
import { heatLevel, heatText, sourceHeat, waitingText } from '../../src/model/source-heat';
import { clientRoot, readStream, referenceSourceHeat, RefNode, toStacks } from '../support/reference';
import { randomStream, taskStream } from '../support/streams';

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
  for (const t of fake.decorationTypes.slice(0, LEVELS)) {
    const o = t.options as { light: { gutterIconPath: Uri }; dark: { gutterIconPath: Uri } };
    assert.match(o.light.gutterIconPath.fsPath, /heat-\d-light\.svg$/);
    assert.match(o.dark.gutterIconPath.fsPath, /heat-\d-dark\.svg$/);
  }
  // The lines where asyncio tasks only wait have a text and no mark.
  assert.equal((fake.decorationTypes[LEVELS].options as { light?: unknown }).light, undefined);

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

// ---- asyncio: waiting time apart from running time ------------------------------------------

test('split by waiting tasks: own and total are of running code, waiting of the waiting tasks\' samples, against the reference', () => {
  for (const seed of [51, 52]) {
    const bodies = taskStream(seed, 20);
    const model = modelOf(bodies);
    for (const hide of [false, true])
      for (const thread of [undefined, 301]) {
        const h = sourceHeat(model, thread, hide, true);
        const running = referenceSourceHeat(bodies, { thread, hideDebugger: hide, waiting: 'exclude' });
        const waiting = referenceSourceHeat(bodies, { thread, hideDebugger: hide, waiting: 'only' });
        const what = `seed ${seed}, thread ${thread ?? 'all'}, hideDebugger ${hide}`;
        assert.equal(h.sampleCount, running.sampleCount, what);
        assert.equal(h.waitingCount, waiting.sampleCount, what);
        const got = { lines: new Map<string, RefNode>(), waitLines: new Map<string, number>(), waitFuncs: new Map<string, number>() };
        for (const [file, fh] of h.files) {
          for (const [line, l] of fh.lines) {
            if (l.total > 0) got.lines.set(`${file}:${line}`, { total: l.total, self: l.own });
            if (l.waiting > 0) got.waitLines.set(`${file}:${line}`, l.waiting);
          }
          for (const f of fh.functions.values()) if (f.waiting > 0) got.waitFuncs.set(`${file}:${f.function}`, f.waiting);
        }
        assert.deepEqual(sorted(got.lines), sorted(running.lines), `running lines: ${what}`);
        assert.deepEqual([...got.waitLines].sort(), [...waiting.lines].map(([k, v]) => [k, v.total]).sort(), `waiting lines: ${what}`);
        assert.deepEqual([...got.waitFuncs].sort(), [...waiting.funcs].map(([k, v]) => [k, v.total]).sort(), `waiting functions: ${what}`);
        assert.ok(got.waitLines.size > 0, what);
      }
    // Not split: every sample is running time, as before.
    assert.equal(sourceHeat(model, undefined, true).sampleCount, model.totals.sampleCount);
  }
  assert.equal(heatText({ own: 1, total: 2, waiting: 30 }, 4, 10), '25.0% own · 50.0% total · 300 ms waiting');
  assert.equal(heatText({ own: 0, total: 0, waiting: 1234 }, 4, 10), '12,340 ms waiting');
  assert.equal(waitingText(7, undefined), '7 samples waiting');
});

const TASKS_APP = ['import asyncio', '', '', 'async def handle():', '    sum(range(1000))', '    await asyncio.sleep(1)', '', '', 'async def main():', '    await asyncio.create_task(handle(), name="handler")', ''].join('\n');

/** A run of TASKS_APP sampled with async "all": the handler runs 3 ticks and then waits 5, under main. */
function taskRun(file: string): ProfilingDataBody[] {
  return [
    {
      newFrames: {
        '1': { file: '', line: 0, function: '(event loop)' },
        '2': { file: '', line: 0, function: 'Task-1', task: 'waiting' },
        '3': { file, line: 10, function: 'main' },
        '4': { file: '', line: 0, function: 'handler', task: 'running' },
        '5': { file, line: 5, function: 'handle' },
        '6': { file: '', line: 0, function: 'handler', task: 'waiting' },
        '7': { file, line: 6, function: 'handle' },
        '8': { file: '/usr/lib/python3.12/asyncio/tasks.py', line: 665, function: 'sleep' },
      },
      samples: [[1, 2, 3, 4, 5], [1, 2, 3, 4, 5], [1, 2, 3, 4, 5], ...Array.from({ length: 5 }, () => [1, 2, 3, 6, 7, 8])],
      threadIds: [1, 1, 1, 1, 1, 1, 1, 1],
      sampleCount: 8,
      duration: 80,
    },
  ];
}

test('with async "all" the editor shows a waiting line\'s time apart: "N ms waiting", no gutter mark where tasks only wait', async () => {
  const file = join(dir, 'tasks.py');
  writeFileSync(file, TASKS_APP);
  const s = makeSession('s1');
  s.answer = (command) => (command === 'startProfiling' ? { ...START_RESPONSE, async: 'all' } : {});
  startSession(s, true);
  assert.ok(await controller.startProfiling(s as never));
  feed(s, taskRun(file));
  const doc = new FakeDocument(file, TASKS_APP);
  const editor = new FakeEditor(doc);
  fake.visibleTextEditors = [editor];
  fake.onVisibleEditorsChanged.fire([editor]);
  await waitRender();
  const shown = decorations(editor);
  // Running: 3 samples (the shares are of them); waiting: 5 samples of 10 ms (rate 100).
  assert.equal(controller.lineHeat.sampleCount, 3);
  assert.deepEqual(shown.get(5), { level: LEVELS, text: '100.0% own · 100.0% total', hover: shown.get(5)!.hover });
  assert.equal(shown.get(6)!.text, '50 ms waiting');
  assert.equal(shown.get(6)!.level, LEVELS + 1, 'the waiting-only decoration, without a gutter mark');
  assert.match(shown.get(6)!.hover, /handle: 50 ms waiting \(waiting tasks\)/);
  assert.equal(shown.get(10)!.text, '0.0% own · 100.0% total · 50 ms waiting');
  assert.match(shown.get(10)!.hover, /main: 0\.0% own · 100\.0% total of 3 samples · 50 ms waiting \(waiting tasks\)/);
  const titles = lenses(doc).map((l) => [doc.lineAt(l.range.start.line).text, l.command!.title]);
  assert.deepEqual(titles.sort(), [
    ['async def handle():', '$(flame) 100.0% own · 100.0% total · 50 ms waiting'],
    ['async def main():', '$(flame) 0.0% own · 100.0% total · 50 ms waiting'],
  ]);
});

test('without async "all" nothing is split: a waiting task\'s samples count as the others', async () => {
  const file = join(dir, 'tasks.py');
  writeFileSync(file, TASKS_APP);
  const s = await profiling();
  feed(s, taskRun(file));
  const editor = new FakeEditor(new FakeDocument(file, TASKS_APP));
  fake.visibleTextEditors = [editor];
  await waitRender();
  assert.equal(controller.lineHeat.sampleCount, 8);
  assert.equal(decorations(editor).get(6)!.text, '0.0% own · 62.5% total');
});
