// End to end in a real VS Code: code-server with the packaged extension installed, driven in
// headless Chromium like a person would (keys, toolbar buttons, mouse). A `dapprof` launch
// configuration debugs test/e2e/fixture/app.py through the real dapprof daemon and debugpy.
//
// Steps, each depending on the one before: a breakpoint is set with F9; F5 starts the session
// and the debug toolbar offers Start Profiling; clicking it fills the flame graph panel (checked
// on the page's model and on pixels); hovering a node shows its function and file:line, and its
// open-source link opens the file at that line; app.py shows each sampled line's share (gutter
// marks, end-of-line text) and a CodeLens per sampled function, whose click reveals it in the
// flame graph; Stop Profiling shows the daemon's summary; Export
// Profile… has the daemon write a speedscope file and a .cpuprofile, saved through VS Code's save
// dialog; settings dapprof refuses
// give one error message with dapprof's reason; the program then reaches the breakpoint, which
// stops it. Then a program that starts a child process: the child gets its own session, which
// is profiled; an attach configuration reaches a program started with debugpy --listen; a
// configuration with debugServer reaches a running `dapprof serve`; and one more reaches a
// `dapprof serve` whose debugpy and program run in the Debian unstable root, as in a container,
// on CPython 3.14 (E2E_ROOT_PYTHON names another of tests/support/pythons.py's, e.g. sid-3.13).
// Screenshots of every step go to build/e2e-screenshots/ of the repository.
//
// Inputs (environment): DAPPROF_BIN (required), CODE_SERVER_BIN, DAPPROF_VSIX, E2E_RUN_DIR,
// E2E_SCREENSHOTS, CHROMIUM (scripts/e2e.sh sets them all), E2E_ROOT_PYTHON.

import assert from 'node:assert/strict';
import { ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test, TestContext } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { nodeRgb } from '../../src/webview/theme';
import { launchChromium } from '../support/chromium';
import { CodeServer, freePort, pngPixel, sleep } from './code-server';
import { CHROMIUM, clientRoot, CODE_SERVER_BIN, DAPPROF_BIN, LONG, repoRoot, RUN_DIR, SHOTS, STEP, VSIX } from './paths';
import { assertNoExtensionErrors, Steps } from './steps';
import { FlameView, openWorkbench, waitForListening, Workbench } from './workbench';
import { launchConfigurations, rootConfigurationName, rootPython, WORKBENCH_SETTINGS } from './workspace';

/* eslint-disable @typescript-eslint/no-explicit-any */

const FIXTURE = join(clientRoot, 'test/e2e/fixture/app.py');
const SPAWNER = join(clientRoot, 'test/e2e/fixture/spawner.py');
/** Profiles recorded by dapprof (tests/formats/fixtures/README.md), opened as files. */
const SPEEDSCOPE_FIXTURE = join(repoRoot, 'tests/formats/fixtures/busy.speedscope.json');
const COLLAPSED_FIXTURE = join(repoRoot, 'tests/formats/fixtures/busy-threads.txt');

const workspace = join(RUN_DIR, 'workspace');
const program = join(workspace, 'app.py');
const flag = join(workspace, 'continue.flag');
const spawner = join(workspace, 'spawner.py');
const childFlag = join(workspace, 'child-done.flag');
const source = readFileSync(FIXTURE, 'utf8').split('\n');
/** 1-based line of the fixture's marked breakpoint, and the line ranges of its functions. */
const breakpointLine = source.findIndex((l) => l.includes('# breakpoint')) + 1;
function functionLines(name: string): [number, number] {
  const start = source.findIndex((l) => l.startsWith(`def ${name}(`));
  let end = start + 1;
  while (end < source.length && (source[end] === '' || source[end].startsWith(' '))) end++;
  while (source[end - 1] === '') end--;
  return [start + 1, end];
}

let listenPort = 0;
let listening: ChildProcess | undefined;
let servePort = 0;
let serving: ChildProcess | undefined;
const serveFlag = join(workspace, 'serve-done.flag');
const ROOT_LABEL = process.env.E2E_ROOT_PYTHON || 'sid-3.14';
/** The interpreter in a root, or why it is missing. */
const rooted = rootPython(repoRoot, ROOT_LABEL);
let rootPort = 0;
let rootServing: ChildProcess | undefined;
const rootFlag = join(workspace, 'root-done.flag');
const attachFlag = join(workspace, 'attach-done.flag');

let server: CodeServer;
let browser: Browser;
let page: Page;
let decoder: Page;
let wb: Workbench;
let flame: FlameView | undefined;
const steps = new Steps('e2e', SHOTS, '', () => page);
const note = (what: string) => steps.note(what);
const screenshot = (name: string) => steps.screenshot(name);
const step = (t: TestContext, name: string, body: () => Promise<void>) => steps.step(t, name, body);

/**
 * After a click on Start Profiling: the toolbar offers Stop Profiling once the run started, or
 * the extension's error (shown for a moment only) is the failure. The flame graph panel may
 * still be open from an earlier run, so its tab says nothing.
 */
async function profilingStarted(): Promise<FlameView> {
  const outcome = await Promise.race([
    wb.toolbarButton('Stop Profiling').waitFor({ timeout: LONG }).then(() => 'started'),
    page.waitForSelector('.notifications-toasts .notification-list-item:has(.codicon-error)', { timeout: LONG }).then(() => 'error'),
  ]);
  if (outcome === 'error') assert.fail(`Start Profiling failed: ${(await wb.notifications()).join(' | ')}`);
  await page.waitForSelector('.tab[aria-label^="Flame Graph"]', { timeout: LONG });
  return wb.flame(program, STEP);
}

/**
 * Start Profiling in the toolbar, until the flame graph holds samples of each named function of
 * `file`; a screenshot; then Stop Profiling, until the panel shows the run stopped.
 */
async function profileUntil(file: string, names: string[], minSamples: number, shot: string): Promise<void> {
  await wb.toolbarButton('Start Profiling').waitFor({ timeout: LONG });
  await wb.toolbarButton('Start Profiling').click();
  flame = await profilingStarted();
  await flame!.waitForFunctions(file, names, minSamples, LONG);
  await screenshot(shot);
  await wb.toolbarButton('Stop Profiling').click();
  await flame.waitForState('Stopped');
}

before(async () => {
  assert.ok(DAPPROF_BIN && existsSync(DAPPROF_BIN), `DAPPROF_BIN must name the dapprof executable (got "${DAPPROF_BIN}")`);
  assert.ok(existsSync(VSIX), `${VSIX} not found: package the extension first (npm run package)`);
  assert.ok(breakpointLine > 0, 'the fixture marks its breakpoint line');
  rmSync(RUN_DIR, { recursive: true, force: true });
  mkdirSync(join(workspace, '.vscode'), { recursive: true });
  rmSync(SHOTS, { recursive: true, force: true });
  mkdirSync(SHOTS, { recursive: true });
  copyFileSync(FIXTURE, program);
  copyFileSync(SPAWNER, spawner);
  copyFileSync(SPEEDSCOPE_FIXTURE, join(workspace, 'busy.speedscope.json'));
  copyFileSync(COLLAPSED_FIXTURE, join(workspace, 'busy.collapsed'));
  listenPort = await freePort();
  servePort = await freePort();
  rootPort = await freePort();
  const root = typeof rooted === 'string' ? undefined : { python: rooted, port: rootPort };
  writeFileSync(join(workspace, '.vscode', 'launch.json'), JSON.stringify(launchConfigurations(listenPort, servePort, root), null, 2));
  server = new CodeServer({
    bin: CODE_SERVER_BIN,
    runDir: RUN_DIR,
    // With opcodes: the line-heat step checks the sub-line heat too.
    userSettings: { ...WORKBENCH_SETTINGS, 'dapprof.profiling.opcodes': true },
    machineSettings: { 'dapprof.path': DAPPROF_BIN },
  });
  const installed = server.installExtension(VSIX);
  assert.match(installed, /successfully installed/);
  note('extension installed');
  await server.start(workspace, LONG);
  note(`code-server answers at ${server.url}`);
  browser = await launchChromium(CHROMIUM, join(RUN_DIR, 'chromium'));
  decoder = await browser.newPage();
  page = await openWorkbench(browser, server.url, workspace, STEP, LONG);
  wb = new Workbench(page);
  note('workbench loaded');
});

after(async () => {
  listening?.kill('SIGKILL');
  serving?.kill('SIGKILL');
  // SIGTERM: dapprof ends its sessions and reaps the adapters in the root, whose programs end
  // with their launcher.
  rootServing?.kill('SIGTERM');
  await browser?.close().catch(() => undefined);
  await server?.stop();
});

test('F9 in the editor sets a breakpoint on the fixture line', async (t) => {
  await step(t, 'breakpoint', async () => {
    await page.locator('.explorer-folders-view .monaco-list-row[aria-label="app.py"]').dblclick({ timeout: LONG });
    await page.waitForSelector('.editor-group-container.active .tab.active[data-resource-name="app.py"]');
    await page.waitForSelector('.editor-group-container.active .monaco-editor .view-lines');
    await page.locator('.editor-group-container.active .monaco-editor textarea').focus();
    await page.keyboard.press('Control+g');
    await page.waitForSelector('.quick-input-widget input:focus');
    await page.keyboard.type(String(breakpointLine));
    await page.keyboard.press('Enter');
    await page.waitForFunction((l) => document.getElementById('status.editor.selection')?.textContent?.startsWith(`Ln ${l},`), breakpointLine);
    note('app.py open at the breakpoint line');
    // F9 does nothing until the workbench knows the debuggers of the extensions (which takes
    // a while on a busy machine after the editor is usable): press it until the glyph shows.
    const glyph = page.locator('.editor-group-container.active .monaco-editor .codicon-debug-breakpoint');
    for (let i = 0; ; i++) {
      await page.keyboard.press('F9');
      if (await glyph.waitFor({ timeout: 5000 }).then(() => true, () => false)) break;
      assert.ok(i < 10, 'F9 sets no breakpoint');
    }
    note('F9 set the breakpoint');
    // The Breakpoints view lists it.
    await page.keyboard.press('Control+Shift+d'); // the Run and Debug view, with its Breakpoints section
    const entry = page.locator('.debug-breakpoints .monaco-list-row').filter({ hasText: 'app.py' });
    await entry.waitFor();
    assert.match((await entry.innerText()).replace(/\s+/g, ' '), new RegExp(`^app\\.py ${breakpointLine}$`));
    await page.locator('.editor-group-container.active .monaco-editor textarea').focus();
    await screenshot('breakpoint-set');
  });
});

test('F5 starts the dapprof session; the debug toolbar offers Start Profiling', async (t) => {
  await step(t, 'F5', async () => {
    await page.keyboard.press('F5');
    await page.waitForSelector('.debug-toolbar', { timeout: LONG });
    await wb.toolbarButton('Start Profiling').waitFor({ timeout: LONG });
    assert.equal(await wb.toolbarButton('Stop Profiling').count(), 0);
    // The debuggee is running, not paused.
    await wb.toolbarButton('Pause').waitFor();
    await page.waitForSelector('.pane-header .call-stack-state-message:has-text("Running")');
    await screenshot('session-started');
  });
});

test('Start Profiling in the toolbar fills the flame graph with the fixture functions', async (t) => {
  await step(t, 'start-profiling', async () => {
    await wb.toolbarButton('Start Profiling').click();
    flame = await profilingStarted();
    // Samples of the program's own functions arrive: main > work > fibonacci / checksum.
    await flame!.waitForFunctions(program, ['main', 'work', 'fibonacci', 'checksum'], 50, LONG);
    await wb.toolbarButton('Stop Profiling').waitFor();
    assert.equal(await wb.toolbarButton('Start Profiling').count(), 0);
    // The header and the status bar show it once drawn: the page draws on an animation frame and
    // the status bar follows the extension's own updates, both after the model has the data.
    await flame.frame.waitForFunction(
      () =>
        document.getElementById('state')?.textContent === 'Live' &&
        /^[\d,]+ samples · [\d.]+ samples\/s over /.test(document.getElementById('stats')?.textContent ?? ''),
      undefined,
      { timeout: LONG },
    );
    await page.locator('.statusbar-item:has(.codicon-flame)').filter({ hasText: /[\d,]+ samples · 100 Hz/ }).first().waitFor({ timeout: LONG });

    const [work, fib, sum] = await flame!.nodes(['main', 'work'], ['main', 'work', 'fibonacci'], ['main', 'work', 'checksum']);
    assert.ok(work, 'main > work is drawn');
    assert.equal(work.file, program);
    const [ws, we] = functionLines('work');
    assert.ok(work.line >= ws && work.line <= we, `work's line ${work.line} is in ${ws}-${we}`);
    assert.ok(fib && sum, 'work calls fibonacci and checksum');
    assert.ok(fib.total + sum.total <= work.total);
    // The model's tree is consistent: a child is never bigger than its parent, the root sums its children.
    const consistent = await flame.frame.evaluate(() => {
      const app = (window as any).__dapprof;
      const walk = (n: any): boolean => {
        let sum = n.self;
        for (const c of n.children?.values() ?? []) {
          if (!walk(c)) return false;
          sum += c.total;
        }
        return sum === n.total;
      };
      // Read through the model, which takes in the samples that arrived since the last frame.
      const tree = app.model.tree(app.groupBy, app.thread, app.hideDebugger);
      return walk(tree.root) && tree.root.total === app.model.totals.sampleCount;
    });
    assert.ok(consistent, 'every node total is its own samples plus its children');

    // Pixels: the node is drawn in its function's colour, on the canvas and on the screen.
    const kind = await flame.frame.evaluate(() => (window as any).__dapprof.graph.palette.kind);
    const expected = nodeRgb('work', false, kind);
    // Batches keep arriving and may move the node between reading the layout and taking the
    // screenshot: a few attempts, each comparing one drawn frame's canvas and screen.
    let last = '';
    for (let attempt = 0; ; attempt++) {
      await flame.frame.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      const now = (await flame!.node(['main', 'work']))!;
      // Away from the label (which starts 3 px in and is centred vertically).
      const px = now.x + 2, py = now.y + 1;
      const drawn = await flame!.pixel(px, py);
      const origin = await flame!.origin();
      const png = await screenshot('profiling-live');
      const screen = await pngPixel(decoder, png, origin.x + px, origin.y + py);
      const unchanged = (await flame!.node(['main', 'work']))!;
      const ok = drawn.every((v, i) => v === expected[i]) && screen.every((v, i) => Math.abs(v - expected[i]) <= 2);
      if (ok) break;
      last = `canvas ${drawn}, screen ${screen}, expected ${expected}, node moved: ${unchanged.x !== now.x || unchanged.y !== now.y}`;
      assert.ok(attempt < 5, `the webview shows the node on screen in its colour: ${last}`);
      steps.retake();
    }
  });
});

test('hovering a node shows function and file:line; its open-source link opens the file at that line', async (t) => {
  await step(t, 'hover-open-source', async () => {
    const path = ['main', 'work', 'fibonacci'];
    const n = (await flame!.node(path))!;
    const origin = await flame!.origin();
    await page.mouse.move(origin.x + n.x + Math.min(n.w / 2, 40), origin.y + n.y + n.h / 2);
    await flame!.frame.waitForSelector('#tooltip:not([hidden])');
    assert.equal(await flame!.frame.textContent('#tooltip .fn'), 'fibonacci');
    const loc = (await flame!.frame.textContent('#tooltip .loc')) ?? '';
    assert.ok(loc.startsWith(`${program}:`), `the tooltip names the file and line: ${loc}`);
    const line = Number(loc.slice(program.length + 1));
    assert.match(await flame!.frame.textContent('#tooltip .samples') ?? '', /^[\d,]+ samples · [\d.]+% of total · [\d.]+% of parent$/);
    const [fs, fe] = functionLines('fibonacci');
    assert.ok(line >= fs && line <= fe, `fibonacci's line ${line} is in ${fs}-${fe}`);
    await screenshot('hover-tooltip');

    // A click zooms into the node; the bar below the graph then links to its source.
    await page.mouse.click(origin.x + n.x + Math.min(n.w / 2, 40), origin.y + n.y + n.h / 2);
    const link = flame!.frame.locator('#details a.open-source');
    await link.waitFor();
    assert.equal(await link.textContent(), `${program}:${line}`);
    // As long as a person's click, while batches keep redrawing the panel.
    await link.click({ delay: 150 });
    await page.waitForSelector('.editor-group-container.active .tab.active[data-resource-name="app.py"]');
    await page.waitForFunction((l) => document.getElementById('status.editor.selection')?.textContent?.startsWith(`Ln ${l},`), line);
    assert.notEqual(line, breakpointLine, 'the cursor moved from where F9 left it');
    await screenshot('open-source');
  });
});

test('while profiling, app.py shows line heat and CodeLenses; a CodeLens reveals its function in the flame graph', async (t) => {
  await step(t, 'line-heat', async () => {
    // The editor of app.py (the open-source link left it active), scrolled to the top.
    // (Its group stays put when the panel beside it takes the focus.)
    const editor = page.locator('.editor-group-container').filter({ has: page.locator('.tab.active[data-resource-name="app.py"]') }).locator('.monaco-editor').first();
    await page.locator('.editor-group-container.active .monaco-editor textarea').focus();
    await page.keyboard.press('Control+Home');
    // The gutter marks (VS Code draws them as the decoration's background image) and the
    // end-of-line annotations (text, or a pseudo-element's content), redrawn a few times a second.
    const heat = async () =>
      editor.evaluate((root) => {
        const marks = [...root.querySelectorAll('.margin div')].filter((e) => /heat-\d-(dark|light)\.svg/.test(getComputedStyle(e).backgroundImage)).length;
        const texts: string[] = [];
        for (const e of root.querySelectorAll('.view-lines span')) {
          const after = getComputedStyle(e, '::after').content;
          for (const t of [e.childElementCount === 0 ? e.textContent ?? '' : '', after && after !== 'none' ? after.replace(/^"|"$/g, '') : '']) if (/ own · /.test(t)) texts.push(t);
        }
        return { marks, texts };
      });
    let seen = await heat();
    for (const deadline = Date.now() + STEP; !(seen.marks > 0 && seen.texts.length > 0) && Date.now() < deadline; seen = await heat()) await sleep(250);
    assert.ok(seen.marks > 0, 'heat marks in the gutter');
    assert.ok(seen.texts.length > 0, 'own and total at the ends of lines');
    for (const text of seen.texts) assert.match(text, /^\d+\.\d% own · \d+\.\d% total$/);
    await screenshot('line-heat');

    // Sub-line heat (opcodes): checksum's `total = (total * 31 + i) % 1000003` has its hottest
    // expressions underlined, each with its share of the line after it; hovering one names it and
    // its instructions, BINARY_OP's specialised forms among them (CPython 3.11's adaptive
    // interpreter specialises the int arithmetic of this loop at once).
    const expressions = async () =>
      editor.evaluate((root) => {
        const under: { text: string; x: number; y: number; w: number; h: number }[] = [];
        const shares: string[] = [];
        for (const e of root.querySelectorAll('.view-lines span')) {
          const style = getComputedStyle(e);
          if (style.textDecorationLine.includes('underline') && style.textDecorationStyle === 'dotted' && e.childElementCount === 0) {
            const r = e.getBoundingClientRect();
            under.push({ text: e.textContent ?? '', x: r.x, y: r.y, w: r.width, h: r.height });
          }
          // A share after an expression: an injected text, or a pseudo-element's content.
          const after = getComputedStyle(e, '::after').content;
          for (const t of [e.childElementCount === 0 ? e.textContent ?? '' : '', after && after !== 'none' ? after.replace(/^"|"$/g, '') : '']) if (/^\d+%$/.test(t)) shares.push(t);
        }
        return { under, shares };
      });
    let sub = await expressions();
    for (const deadline = Date.now() + STEP; (sub.under.length === 0 || sub.shares.length === 0) && Date.now() < deadline; sub = await expressions()) await sleep(250);
    assert.ok(sub.under.length > 0, 'expressions of a hot line underlined');
    assert.ok(sub.shares.length > 0, 'their shares of the line after them');
    // VS Code draws an underlined range as its tokens' spans: those of checksum's line among them.
    assert.ok(sub.under.some((u) => /^(total|31|\*)\s*$/.test(u.text)), `checksum's hot line underlined: ${JSON.stringify(sub.under.map((u) => u.text))}`);
    await screenshot('sub-line-heat');
    // The live heat redraws its decorations as samples come, which can move the expression from
    // under the pointer or close a hover before it shows: point at it afresh until one shows.
    const hover = page.locator('.monaco-hover').filter({ hasText: /of this line's samples/ });
    for (const deadline = Date.now() + STEP; ; sub = await expressions()) {
      const u = sub.under.find((x) => /^31$/.test(x.text)) ?? sub.under.find((x) => /^(total|\*)\s*$/.test(x.text));
      if (u) {
        await page.mouse.move(0, 0);
        await page.mouse.move(u.x + Math.min(u.w / 2, 20), u.y + u.h / 2);
        if (await hover.first().waitFor({ timeout: 5000 }).then(() => true, () => false)) break;
      }
      assert.ok(Date.now() < deadline, `no hover on checksum's underlined expressions: ${JSON.stringify(sub.under.map((x) => x.text))}`);
      await sleep(250);
    }
    const hoverText = (await hover.first().textContent()) ?? '';
    assert.match(hoverText, /\d+% of this line's samples \(all threads\)/);
    assert.match(hoverText, /(BINARY_OP|LOAD_FAST|LOAD_CONST|STORE_FAST)\w* \d+%/);
    await screenshot('sub-line-heat-hover');
    await page.keyboard.press('Escape');

    // A CodeLens above each sampled def: the topmost is fibonacci's (the first def of the file).
    const lenses = editor.locator('.codelens-decoration a').filter({ hasText: / own · / });
    await lenses.first().waitFor({ timeout: STEP });
    const topLens = async () => {
      const boxes = await lenses.evaluateAll((els) => els.map((e) => ({ text: e.textContent ?? '', ...JSON.parse(JSON.stringify(e.getBoundingClientRect())) })));
      return boxes.reduce((a, b) => (b.y < a.y ? b : a));
    };
    assert.ok((await lenses.count()) >= 3, 'a CodeLens per sampled function');
    assert.match((await topLens()).text, /\d+\.\d% own · \d+\.\d% total/);
    await screenshot('line-heat-codelens');
    // The panel is still zoomed into fibonacci from the step before: zoom out first.
    await flame!.frame.locator('#reset').click();
    await flame!.frame.waitForFunction(() => (window as any).__dapprof.graph.zoomPath.length === 0);
    // The lens is redrawn as data arrives: click where it is until the panel has zoomed into
    // fibonacci and given it the focus.
    const revealed = () =>
      flame!.frame
        .waitForFunction(
          () => {
            const app = (window as any).__dapprof;
            const z = app.graph.zoomNode();
            return z && z.parent && app.infoOf(z).function === 'fibonacci' && app.graph.focused === z;
          },
          undefined,
          { timeout: 5000 },
        )
        .then(() => true, () => false);
    for (let attempt = 0; ; attempt++) {
      const b = await topLens();
      await page.mouse.click(b.x + Math.min(b.width / 2, 30), b.y + b.height / 2);
      if (await revealed()) break;
      assert.ok(attempt < 5, 'a click on the CodeLens reveals fibonacci in the flame graph');
    }
    assert.match((await flame!.frame.textContent('#details')) ?? '', /fibonacci/);
    await screenshot('line-heat-revealed');
  });
});

test('the timeline shows the live run; a range dragged on it limits the graph and the table', async (t) => {
  await step(t, 'timeline-range', async () => {
    const f = flame!.frame;
    // A second of samples at least: ten buckets of 100 ms.
    await f.waitForFunction(() => (window as any).__dapprof.model.timeline.bucketCount >= 10 && (window as any).__dapprof.timeline.maxShown > 0, undefined, { timeout: LONG });
    const box = await f.locator('#timeline-canvas').boundingBox();
    assert.ok(box && box.width > 100 && box.height > 20, 'the strip is laid out above the graph');
    const zoom = await f.evaluate(() => (window as any).__dapprof.graph.zoomPath.length);
    const y = box.y + box.height / 2;
    await page.mouse.move(box.x + box.width * 0.2, y);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.4, y, { steps: 4 });
    await page.mouse.move(box.x + box.width * 0.6, y, { steps: 4 });
    await page.mouse.up();
    await f.waitForFunction(() => (window as any).__dapprof.range !== null);
    // At one instant (batches keep arriving): the graph holds the range's buckets, less than the run.
    const r = await f.evaluate(() => {
      const app = (window as any).__dapprof, tl = app.model.timeline;
      const [first, end] = tl.bucketsIn(app.range);
      let inRange = 0;
      for (let b = first; b < end; b++) inRange += tl.count(b, app.thread);
      const tree = app.model.tree(app.groupBy, app.thread, app.hideDebugger);
      const rows = app.model.table(app.groupBy, app.thread, 'total', Infinity, app.hideDebugger);
      return { buckets: end - first, inRange, shown: tree.root.total, all: app.model.totals.sampleCount, topRow: rows[0]?.total ?? 0, zoom: app.graph.zoomPath.length };
    });
    assert.ok(r.buckets >= 2, `the range spans buckets: ${JSON.stringify(r)}`);
    assert.equal(r.shown, r.inRange, 'the graph holds the samples of the range');
    assert.ok(r.shown > 0 && r.shown < r.all, `a part of the run: ${JSON.stringify(r)}`);
    assert.ok(r.topRow <= r.shown, 'the table counts the range only');
    assert.equal(r.zoom, zoom, 'the zoom stays');
    await f.waitForFunction(() => /^Range .*: [\d,]+ samples$/.test(document.getElementById('timeline-label')?.textContent ?? ''));
    await screenshot('e2e-timeline');
    await f.click('#timeline-clear');
    await f.waitForFunction(() => (window as any).__dapprof.range === null);
  });
});

test('Stop Profiling shows the summary', async (t) => {
  await step(t, 'stop-profiling', async () => {
    await wb.toolbarButton('Stop Profiling').click();
    await flame!.waitForState('Stopped');
    const stats = (await flame!.frame.textContent('#stats')) ?? '';
    const m = /^([\d,]+) samples in ([\d.]+) s/.exec(stats);
    assert.ok(m, `summary: ${stats}`);
    const count = Number(m[1].replace(/,/g, ''));
    assert.ok(count >= 50 && Number(m[2]) > 0, stats);
    assert.ok(await flame!.frame.$eval('#stats', (e) => e.scrollWidth <= e.clientWidth), 'the summary is not cut off in the panel beside the editor');
    const toast = page.locator('.notifications-toasts .notification-list-item').filter({ hasText: 'Profiling stopped' });
    await toast.waitFor();
    // The daemon's totals, and the first of its top functions (the table is in the output channel).
    assert.match((await toast.textContent()) ?? '', new RegExp(`Profiling stopped: ${m[1]} samples in [\\d.]+ s.*Top function: \\S+ \\([\\d.]+% own\\)`));
    await wb.toolbarButton('Start Profiling').waitFor();
    assert.equal(await wb.toolbarButton('Stop Profiling').count(), 0);
    await screenshot('profiling-stopped');
  });
});

let stoppedSamples = 0;

test('Export Profile… saves a speedscope file of the run and opens it', async (t) => {
  await step(t, 'export', async () => {
    const stats = (await flame!.frame.textContent('#stats')) ?? '';
    stoppedSamples = Number(/^([\d,]+) samples/.exec(stats)![1].replace(/,/g, ''));
    // The format, then the save dialog (VS Code's own, a path in the quick input).
    await wb.exportDialog('speedscope', 'speedscope.json');
    const target = join(workspace, 'exported.speedscope.json');
    const input = page.locator('.quick-input-widget input');
    await screenshot('export-dialog');
    await input.fill(target);
    await page.keyboard.press('Enter');
    await page.waitForSelector('.tab[data-resource-name="exported.speedscope.json"]', { timeout: STEP });
    const doc = JSON.parse(readFileSync(target, 'utf8'));
    assert.match(doc.$schema, /speedscope/);
    const frames: Array<{ name: string; file?: string }> = doc.shared.frames;
    const names = frames.map((f) => f.name);
    for (const fn of ['main', 'work', 'fibonacci', 'checksum']) assert.ok(names.includes(fn), `${fn} in the exported frames`);
    // The daemon wrote it as the panel shows it: "Hide debugger" is on, so no frame of debugpy's.
    assert.deepEqual(frames.filter((f) => /\/debugpy\/|pydevd/.test(f.file ?? '')), [], 'no debugger frame in the export');
    // Every sample of the run, weighted in samples or in milliseconds (10 ms a sample at 100 Hz).
    const profiles: Array<{ unit: string; weights: number[] }> = doc.profiles;
    const exported = profiles.reduce((a, p) => a + p.weights.reduce((x, y) => x + y, 0) / (p.unit === 'milliseconds' ? 10 : 1), 0);
    assert.equal(Math.round(exported), stoppedSamples, 'every sample of the run is exported');
    // VS Code opens it in dapprof's own editor. Its page takes the focus once loaded: in CI that
    // came after the next step's quick pick had opened, and closed it.
    await wb.webviewText('dapprof.dapprof', ['Stopped', 'read from exported.speedscope.json'], STEP);
    await screenshot('exported');
  });
});

test('Export Profile… as .cpuprofile writes every sample, and VS Code opens it', async (t) => {
  await step(t, 'export-cpuprofile', async () => {
    await wb.exportDialog('cpuprofile', 'cpuprofile');
    const target = join(workspace, 'exported.cpuprofile');
    await page.locator('.quick-input-widget input').fill(target);
    await page.keyboard.press('Enter');
    // VS Code opens it in its own profile viewer (a custom editor), in a tab named after the file.
    await page.waitForSelector('.tab[data-resource-name="exported.cpuprofile"]', { timeout: STEP });
    const doc = JSON.parse(readFileSync(target, 'utf8'));
    // A leaf has no `children` (optional in the format, and left out by dapprof's writer).
    const nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount: number; children: number[] }> = doc.nodes.map(
      (n: { children?: number[] }) => ({ ...n, children: n.children ?? [] }),
    );
    // Every sample of the run: one entry in `samples`, one time delta (samples in time order, so
    // none negative) and one hit each.
    assert.equal(doc.samples.length, stoppedSamples);
    assert.equal(doc.timeDeltas.length, stoppedSamples);
    assert.ok(doc.timeDeltas.every((d: number) => d >= 0), 'samples in time order');
    assert.ok(doc.endTime > doc.startTime);
    assert.equal(nodes.reduce((a, n) => a + n.hitCount, 0), stoppedSamples);
    const byId = new Map(nodes.map((n) => [n.id, n]));
    assert.ok(doc.samples.every((id: number) => byId.has(id)), 'every sample names a node');
    assert.ok(nodes.every((n) => n.children.every((c) => byId.has(c))), 'every child is a node');
    // No node without samples: each one's subtree holds at least one hit.
    const hits = (n: (typeof nodes)[number]): number => n.hitCount + n.children.reduce((a, c) => a + hits(byId.get(c)!), 0);
    const empty = nodes.filter((n) => hits(n) === 0).map((n) => n.callFrame.functionName);
    assert.deepEqual(empty, [], 'nodes without samples');
    // The program's functions, at 0-based lines inside their definitions, in their file.
    for (const fn of ['work', 'fibonacci', 'checksum']) {
      const n = nodes.find((x) => x.callFrame.functionName === fn);
      assert.ok(n, `${fn} in the exported nodes`);
      // The file, as a path (dapprof's writer) or a file URL.
      assert.ok([program, `file://${program}`].includes(n.callFrame.url), `${fn}'s url: ${n.callFrame.url}`);
      const [first, last] = functionLines(fn);
      assert.ok(n.callFrame.lineNumber + 1 >= first && n.callFrame.lineNumber + 1 <= last, `${fn}: line ${n.callFrame.lineNumber + 1} in ${first}-${last}`);
    }
    // VS Code's CPU profile viewer (a built-in extension's custom editor) reads it: its table
    // lists the program's functions.
    const viewer = await wb.webviewText('vscode-js-profile-table', ['fibonacci', 'checksum', 'work'], STEP);
    assert.ok(viewer.includes('app.py'), 'the viewer names the source file');
    await screenshot('exported-cpuprofile');
  });
});

test("a refused Start Profiling shows the adapter's message, once", async (t) => {
  await step(t, 'start-refused', async () => {
    // Settings that dapprof refuses together: native stacks need the threads paused.
    const settings = join(workspace, '.vscode', 'settings.json');
    writeFileSync(settings, JSON.stringify({ 'dapprof.profiling.native': true, 'dapprof.profiling.nonblocking': true }));
    try {
      // The workbench reads the file when it changes; give it that time before the click.
      await sleep(2000);
      await wb.toolbarButton('Start Profiling').click();
      const toast = page.locator('.notifications-toasts .notification-list-item').filter({ hasText: 'nonblocking' });
      await toast.first().waitFor();
      await sleep(1000); // a second notification of the same failure would be there by now
      const shown = (await wb.notifications()).filter((n) => /nonblocking/.test(n));
      assert.equal(shown.length, 1, `one notification: ${shown.join(' | ')}`);
      assert.match(shown[0], /'native' and 'nonblocking' cannot both be true/);
      await screenshot('start-refused');
      // The session can still be profiled: the buttons are back as they were.
      await wb.toolbarButton('Start Profiling').waitFor();
      assert.equal(await wb.toolbarButton('Stop Profiling').count(), 0);
      await toast.first().hover();
      await toast.first().locator('.codicon-notifications-clear').click();
      await toast.first().waitFor({ state: 'detached' });
    } finally {
      rmSync(settings, { force: true });
    }
  });
});

test('the breakpoint still stops the program; Continue lets it finish', async (t) => {
  await step(t, 'breakpoint-hit', async () => {
    writeFileSync(flag, 'go\n');
    await wb.toolbarButton('Continue').waitFor({ timeout: LONG });
    const top = page.locator('.debug-call-stack .monaco-list-row').filter({ hasText: 'checkpoint' }).first();
    await top.waitFor();
    assert.match((await top.textContent()) ?? '', new RegExp(`app\\.py\\s*${breakpointLine}:`));
    await page.waitForSelector('.pane-header .call-stack-state-message:has-text("Paused on breakpoint")');
    await page.waitForFunction((l) => document.getElementById('status.editor.selection')?.textContent?.startsWith(`Ln ${l},`), breakpointLine);
    await screenshot('breakpoint-hit');
    await wb.toolbarButton('Continue').click();
    await page.waitForSelector('.debug-toolbar', { state: 'hidden', timeout: LONG });
    const errors = (await wb.notifications()).filter((n) => /error|could not|failed/i.test(n));
    assert.deepEqual(errors, []);
    await screenshot('session-ended');
  });
});

test('a child process gets a session of its own through dapprof, and can be profiled', async (t) => {
  await step(t, 'child-process', async () => {
    await wb.startConfiguration('spawner.py (dapprof)');
    await page.waitForSelector('.debug-toolbar', { timeout: LONG });
    // debugpy announces the child; the extension starts its session, shown under the parent's.
    const child = page.locator('.debug-call-stack .monaco-list-row').filter({ hasText: /^\s*Subprocess \d+/ });
    await child.first().waitFor({ timeout: LONG });
    assert.equal(await child.count(), 1);
    assert.equal(await page.locator('.debug-call-stack .monaco-list-row').filter({ hasText: 'spawner.py (dapprof)' }).count(), 1);
    await screenshot('child-session');
    // Focus the child session and profile it.
    await child.first().click();
    await profileUntil(spawner, ['child_main', 'child_work'], 20, 'child-profiling');
    // Only the child's code: the parent waits in Popen.wait, which never calls child_work, and
    // its own main is not in this profile.
    const parentFns = await flame!.frame.evaluate((file) => {
      const app = (window as any).__dapprof;
      const out: string[] = [];
      app.model.funcs.forEach((f: any) => f.file === file && f.function === 'parent_main' && out.push(f.function));
      return out;
    }, spawner);
    assert.deepEqual(parentFns, [], 'the child session profiles the child process');
    // The child finishes, then the parent; the sessions end with them.
    writeFileSync(childFlag, 'go\n');
    await page.waitForSelector('.debug-toolbar', { state: 'hidden', timeout: LONG });
    const errors = (await wb.notifications()).filter((n) => /error|could not|failed/i.test(n));
    assert.deepEqual(errors, []);
  });
});

test('an attach configuration with connect reaches a program started with debugpy --listen, and profiles it', async (t) => {
  await step(t, 'attach-connect', async () => {
    // The program waits in debugpy's adapter for a client, as a person would start it.
    listening = spawn('/usr/bin/python3', ['-m', 'debugpy', '--listen', `127.0.0.1:${listenPort}`, program, attachFlag], { cwd: workspace, stdio: 'ignore' });
    const exited = new Promise<number | null>((resolve) => listening!.on('exit', (code) => resolve(code)));
    // Not probed by connecting: debugpy's adapter takes one client, and a probe would be it.
    await waitForListening(listenPort);
    await wb.startConfiguration('attach to debugpy --listen (dapprof)');
    await profileUntil(program, ['main', 'work', 'fibonacci'], 20, 'attach-profiling');
    // Disconnecting leaves the program running; it ends when told to.
    await wb.toolbarButton('Disconnect').click();
    await page.waitForSelector('.debug-toolbar', { state: 'hidden', timeout: LONG });
    writeFileSync(attachFlag, 'go\n');
    // The breakpoint set earlier in app.py is gone with the session: the program just finishes.
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([exited, new Promise((r) => (timer = setTimeout(() => r('timeout'), STEP)))]);
    clearTimeout(timer);
    assert.equal(code, 0, 'the program ran to its end after the debugger disconnected');
    const errors = (await wb.notifications()).filter((n) => /error|could not|failed/i.test(n));
    assert.deepEqual(errors, []);
  });
});

test('a configuration with debugServer reaches dapprof serve, and profiles', async (t) => {
  await step(t, 'debug-server', async () => {
    serving = spawn(DAPPROF_BIN, ['serve', '--listen', `127.0.0.1:${servePort}`, '--python', '/usr/bin/python3', '--log-level', 'warn'], { stdio: 'ignore' });
    await waitForListening(servePort);
    await wb.startConfiguration('app.py through dapprof serve');
    await profileUntil(program, ['main', 'work', 'fibonacci'], 20, 'debug-server-profiling');
    // The breakpoint set with F9 is still there: the program stops at it once told to go on.
    writeFileSync(serveFlag, 'go\n');
    await page.waitForSelector('.pane-header .call-stack-state-message:has-text("Paused on breakpoint")', { timeout: LONG });
    await wb.toolbarButton('Continue').click();
    await page.waitForSelector('.debug-toolbar', { state: 'hidden', timeout: LONG });
    // The server goes on serving after its session ended.
    assert.equal(serving.exitCode, null, 'dapprof serve still runs');
    const errors = (await wb.notifications()).filter((n) => /error|could not|failed/i.test(n));
    assert.deepEqual(errors, []);
  });
});

test(`a dapprof serve whose debugpy runs in a root of its own (${ROOT_LABEL}) debugs and profiles there`, async (t) => {
  if (typeof rooted === 'string') return t.skip(rooted);
  await step(t, 'root-python', async () => {
    // The adapter, its launcher and the program run inside the root; dapprof outside samples
    // the program through /proc.
    rootServing = spawn(DAPPROF_BIN, ['serve', '--listen', `127.0.0.1:${rootPort}`, '--python', rooted.path, '--log-level', 'warn'], { stdio: 'ignore' });
    await waitForListening(rootPort);
    await wb.startConfiguration(rootConfigurationName(ROOT_LABEL));
    await profileUntil(program, ['main', 'work', 'fibonacci'], 20, 'root-profiling');
    // The panel names the run's interpreter, as dapprof read it from the program's memory.
    const who = (await flame!.frame.getAttribute('#stats', 'title')) ?? '';
    const minor = ROOT_LABEL.replace(/^sid-/, '');
    assert.ok(who.includes(`Python ${minor}.`), `the run is on Python ${minor}: ${who}`);
    // The breakpoint set with F9 stops the program in the root too (its file is at the same path).
    writeFileSync(rootFlag, 'go\n');
    await page.waitForSelector('.pane-header .call-stack-state-message:has-text("Paused on breakpoint")', { timeout: LONG });
    await wb.toolbarButton('Continue').click();
    await page.waitForSelector('.debug-toolbar', { state: 'hidden', timeout: LONG });
    const errors = (await wb.notifications()).filter((n) => /error|could not|failed/i.test(n));
    assert.deepEqual(errors, []);
  });
});

test('the panel compares its last run with an earlier one: a differential flame graph, then the normal colours again', async (t) => {
  await step(t, 'diff-baseline', async () => {
    // The runs above went through the same panel: the last is shown, the earlier ones are baselines.
    const f = flame!.frame;
    const options = await f.$$eval('#baseline option', (os) => os.map((o) => o.textContent ?? ''));
    assert.ok(options.length >= 2 && options[0] === 'No baseline', `baselines offered: ${options.join(' | ')}`);
    await f.focus('#baseline');
    await page.keyboard.press('ArrowDown');
    await f.waitForFunction(() => (window as any).__dapprof.diff.baseline !== null && document.querySelectorAll('#diff-table tbody tr').length > 0);
    assert.match((await f.textContent('#diff-legend')) ?? '', /^Compared with run \d+/);
    // Rows of the program's functions, each with its share now, in the baseline, and the change.
    const rows = await f.$$eval('#diff-table tbody tr', (trs) => trs.map((tr) => [(tr as HTMLElement).dataset.path ?? '', Number((tr as HTMLElement).dataset.delta)] as [string, number]));
    assert.ok(rows.some(([p]) => /\bfibonacci$/.test(p)), 'fibonacci in the change table');
    for (let i = 1; i < rows.length; i++) assert.ok(Math.abs(rows[i - 1][1]) >= Math.abs(rows[i][1]), 'rows by change');
    await screenshot('e2e-diff');
    await page.keyboard.press('ArrowUp');
    await f.waitForFunction(() => (window as any).__dapprof.diff.baseline === null && !document.getElementById('table')!.hidden);
  });
});

/**
 * Opens a profile file of the workspace with Quick Open, as a user would: its default editor is
 * the flame graph, which dapprof fills from the file. Resolves to the samples the page shows.
 */
async function openProfileFile(name: string, expectedSamples: number, leaf: string, shotName: string): Promise<void> {
  // Only this editor's page, so that the flame graph found is the file's.
  await wb.runCommand('View: Close All Editors');
  await page.keyboard.press('Control+p');
  await page.locator('.quick-input-widget input').waitFor();
  await page.keyboard.type(name);
  await page.locator('.quick-input-widget .monaco-list-row').filter({ hasText: name }).first().waitFor();
  await page.keyboard.press('Enter');
  await page.waitForSelector(`.tab[data-resource-name="${name}"]`, { timeout: STEP });
  const view = await wb.flame('busy.py', STEP);
  await view.waitForState('Stopped', STEP);
  const shown = await view.frame.evaluate(() => {
    const app = (window as any).__dapprof;
    const funcs: string[] = [];
    app.model.funcs.forEach((f: any) => funcs.push(`${f.function} (${f.file})`));
    return { samples: app.model.totals.sampleCount, funcs, stats: document.getElementById('stats')?.textContent ?? '' };
  });
  assert.equal(shown.samples, expectedSamples, `every sample of ${name}`);
  assert.ok(shown.funcs.includes(`${leaf} (busy.py)`), `${leaf} in ${shown.funcs.join(', ')}`);
  assert.match(shown.stats, new RegExp(`read from ${name.replace('.', '\\.')}`));
  // The graph is drawn: the widest node of leaf_spin has a rectangle on the canvas.
  const node = await view.node([leaf]);
  assert.ok(node && node.w > 0, `${leaf} drawn`);
  await screenshot(shotName);
}

test('a .speedscope.json file of the workspace opens as the flame graph', async (t) => {
  await step(t, 'open-speedscope', async () => {
    const doc = JSON.parse(readFileSync(SPEEDSCOPE_FIXTURE, 'utf8')) as { profiles: Array<{ weights: number[] }> };
    const samples = doc.profiles.reduce((a, p) => a + p.weights.reduce((x, w) => x + w, 0), 0);
    await openProfileFile('busy.speedscope.json', samples, 'leaf_spin', 'open-speedscope');
  });
});

test('a .collapsed file of the workspace opens as the flame graph', async (t) => {
  await step(t, 'open-collapsed', async () => {
    const lines = readFileSync(COLLAPSED_FIXTURE, 'utf8').split('\n').filter((l) => l.trim());
    const samples = lines.reduce((a, l) => a + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
    await openProfileFile('busy.collapsed', samples, 'sleeper', 'open-collapsed');
  });
});

test('the extension host logged no error of the extension', async (t) => {
  // Errors thrown by the extension are logged by the extension host, attributed to dapprof.dapprof.
  if (!server) return t.skip('code-server did not start');
  assertNoExtensionErrors(server.userDataDir);
});
