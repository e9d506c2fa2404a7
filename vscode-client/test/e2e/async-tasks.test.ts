// End to end in a real VS Code: the "asyncio Tasks" view. A code-server of its own (after the
// others), with the packaged extension installed, driven in headless Chromium like a person would:
//
// - A `dapprof` launch configuration debugs tests/fixtures/asyncio_tasks.py (its taskgroup
//   scenario) through a `dapprof serve` whose debugpy and program run in the Debian unstable
//   root on CPython 3.14 (E2E_ROOT_PYTHON names another of tests/support/pythons.py's). The
//   command "dapprof: Show asyncio Tasks" reveals the view in Run and Debug with the program's
//   tasks as the daemon read them: Task-1 at the top, the handlers under it, their fetch tasks
//   under each once expanded; a click on a frame opens the program at that line.
// - The same program on Debian's python3 (3.11), whose tasks dapprof reads from asyncio's own
//   registries: the view shows its two tasks, one under the other.
// - With dapprof.profiling.async set to "all", Start Profiling on the 3.14 program: the flame
//   graph panel's "By task" view has the program's tasks at its roots, the tasks awaiting others
//   above those they await, and "Waiting tasks" (on) shows the waiting fetch tasks; off, only
//   the running cpu task remains.
//
// Screenshots go to build/e2e-screenshots/ of the repository as async-tasks-NN-NAME.png.
// Inputs (environment): as e2e.test.ts (scripts/e2e.sh sets them), with its run directory in
// E2E_RUN_DIR-tasks.

import assert from 'node:assert/strict';
import { ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test, TestContext } from 'node:test';
import type { Browser, Frame, Locator, Page } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import { CodeServer, freePort } from './code-server';
import { CHROMIUM, CODE_SERVER_BIN, DAPPROF_BIN, LONG, repoRoot, RUN_DIR, SHOTS, STEP, VSIX } from './paths';
import { assertNoExtensionErrors, Steps } from './steps';
import { openWorkbench, waitForListening, Workbench } from './workbench';
import { rootPython, WORKBENCH_SETTINGS } from './workspace';

const FIXTURE = join(repoRoot, 'tests/fixtures/asyncio_tasks.py');
const RUN = `${RUN_DIR}-tasks`;
const workspace = join(RUN, 'workspace');
const program = join(workspace, 'tasks.py');
const source = readFileSync(FIXTURE, 'utf8').split('\n');
const ROOT_LABEL = process.env.E2E_ROOT_PYTHON || 'sid-3.14';
const rooted = rootPython(repoRoot, ROOT_LABEL);
const ROOTED = `tasks.py on ${ROOT_LABEL} through dapprof serve`;
const DEBIAN = 'tasks.py on /usr/bin/python3 (dapprof)';

let server: CodeServer;
let browser: Browser;
let page: Page;
let wb: Workbench;
let rootPort = 0;
let rootServing: ChildProcess | undefined;
const steps = new Steps('e2e async-tasks', SHOTS, 'async-tasks-', () => page);
const note = (what: string) => steps.note(what);
const screenshot = (name: string) => steps.screenshot(name);
const step = (t: TestContext, name: string, body: () => Promise<void>) => steps.step(t, name, body);

/** The view's pane in the Run and Debug container. */
function tasksPane(): Locator {
  return page.locator('.pane').filter({ has: page.locator('.pane-header', { hasText: 'asyncio Tasks' }) });
}

/** The view's row whose label is `label` (rows read "label description"). */
function row(label: string): Locator {
  return tasksPane()
    .locator('.monaco-list-row')
    .filter({ has: page.locator('.label-name', { hasText: new RegExp(`^${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) }) });
}

/** Starts a configuration and waits until the extension knows the session talks to dapprof. */
async function startSession(name: string): Promise<void> {
  await wb.startConfiguration(name);
  await page.waitForSelector('.debug-toolbar', { timeout: LONG });
  await wb.toolbarButton('Start Profiling').waitFor({ timeout: LONG });
}

async function endSession(): Promise<void> {
  await wb.toolbarButton('Stop (').click();
  await page.waitForSelector('.debug-toolbar', { state: 'hidden', timeout: LONG });
}

before(async () => {
  assert.ok(DAPPROF_BIN && existsSync(DAPPROF_BIN), `DAPPROF_BIN must name the dapprof executable (got "${DAPPROF_BIN}")`);
  assert.ok(existsSync(VSIX), `${VSIX} not found: package the extension first (npm run package)`);
  rmSync(RUN, { recursive: true, force: true });
  mkdirSync(join(workspace, '.vscode'), { recursive: true });
  mkdirSync(SHOTS, { recursive: true });
  copyFileSync(FIXTURE, program);
  rootPort = await freePort();
  const configurations: object[] = [
    { type: 'dapprof', request: 'launch', name: DEBIAN, program: '${workspaceFolder}/tasks.py', args: ['direct'], python: '/usr/bin/python3', console: 'internalConsole' },
  ];
  // The program runs inside the root, where the workspace is at the same path (the root binds
  // the repository in) and only the interpreter's own name means anything.
  if (typeof rooted !== 'string')
    configurations.push({ type: 'dapprof', request: 'launch', name: ROOTED, program: '${workspaceFolder}/tasks.py', args: ['taskgroup'], python: rooted.innerPath, console: 'internalConsole', debugServer: rootPort });
  writeFileSync(join(workspace, '.vscode', 'launch.json'), JSON.stringify({ version: '0.2.0', configurations }, null, 2));
  server = new CodeServer({ bin: CODE_SERVER_BIN, runDir: RUN, userSettings: { ...WORKBENCH_SETTINGS, 'dapprof.profiling.async': 'all' }, machineSettings: { 'dapprof.path': DAPPROF_BIN } });
  assert.match(server.installExtension(VSIX), /successfully installed/);
  await server.start(workspace, LONG);
  note(`code-server answers at ${server.url}`);
  browser = await launchChromium(CHROMIUM, join(RUN, 'chromium'));
  page = await openWorkbench(browser, server.url, workspace, STEP, LONG);
  wb = new Workbench(page);
  // Until the workbench has read the debuggers' and the extension's contributions, the palette
  // lacks their commands.
  await wb.waitForCommand('Debug: Select and Start Debugging');
  await wb.waitForCommand('dapprof: Show asyncio Tasks');
  note('workbench loaded');
});

after(async () => {
  // SIGTERM: dapprof ends its sessions and reaps the adapters in the root, whose programs end with them.
  rootServing?.kill('SIGTERM');
  await browser?.close().catch(() => undefined);
  await server?.stop();
});

test(`dapprof: Show asyncio Tasks shows the tasks of a program on ${ROOT_LABEL}, and a frame opens its source`, async (t) => {
  if (typeof rooted === 'string') return t.skip(rooted);
  await step(t, 'async-tasks', async () => {
    rootServing = spawn(DAPPROF_BIN, ['serve', '--listen', `127.0.0.1:${rootPort}`, '--python', rooted.path, '--log-level', 'warn'], { stdio: 'ignore' });
    await waitForListening(rootPort);
    await startSession(ROOTED);
    // The program has made its tasks once it printed its truth line; the debug console has it.
    await wb.runExtensionCommand('dapprof: Show asyncio Tasks');
    await tasksPane().waitFor({ timeout: LONG });
    // Room for the tree (rows out of sight are not drawn): the other sections of Run and Debug
    // (Variables, Watch, Call Stack, Breakpoints) are collapsed.
    const others = page.locator('.pane-header[aria-expanded="true"]').filter({ hasNotText: 'asyncio Tasks' });
    for (let i = 0; (await others.count()) > 0; i++) {
      assert.ok(i < 10, 'the other sections do not collapse');
      await others.first().click();
    }
    // Read too early (the tasks still being made), the tree lacks some: refresh until the handlers show.
    for (let i = 0; !(await row('handler-2').isVisible()); i++) {
      assert.ok(i < 20, `the view never showed handler-2: ${(await tasksPane().innerText()).slice(0, 500)}`);
      await page.waitForTimeout(1000);
      await tasksPane().hover();
      await tasksPane().locator('.action-label[aria-label^="Refresh asyncio Tasks"]').click();
      await page.waitForTimeout(500);
    }
    for (const name of ['Task-1', 'handler-0', 'handler-1', 'handler-2', 'cpu']) await row(name).waitFor({ timeout: STEP });
    const header = (await tasksPane().innerText()).replace(/\s+/g, ' ');
    assert.match(header, /11 task\(s\) of ".*" \(Python 3\.14\.\d+\), read at /);
    // Under a root: its frames, outermost first (the program's coroutine), then what it awaits.
    assert.equal(await row('Task-1').locator('.label-description').innerText(), 'waiting');
    // A handler opens on a click: its fetch tasks under it.
    await row('handler-0').click();
    await row('fetch-0-0').waitFor({ timeout: STEP });
    await row('fetch-0-1').waitFor({ timeout: STEP });
    await screenshot('tasks-view');

    // A click on a frame opens the program at that line.
    await row('fetch-0-0').click();
    const frame = row('leaf_wait').first();
    await frame.waitFor({ timeout: STEP });
    const text = await frame.locator('.label-description').innerText();
    assert.ok(text.startsWith(`${program}:`), `the frame is in the program: ${text}`);
    const line = Number(/:(\d+)$/.exec(text)?.[1]);
    assert.equal(source[line - 1].trim(), 'await forever.wait()', `the frame's line ${line}: ${text}`);
    await frame.click();
    await page.waitForSelector('.editor-group-container.active .tab.active[data-resource-name="tasks.py"]', { timeout: STEP });
    await page.waitForFunction((l) => document.getElementById('status.editor.selection')?.textContent?.startsWith(`Ln ${l},`), line, { timeout: STEP });
    await screenshot('tasks-frame-source');
    await endSession();
  });
});

test('the tasks of a program on Debian\'s 3.11, read from asyncio\'s own registries', async (t) => {
  await step(t, 'async-tasks-3.11', async () => {
    await startSession(DEBIAN);
    await wb.runExtensionCommand('dapprof: Show asyncio Tasks');
    await tasksPane().waitFor({ timeout: LONG });
    for (let i = 0; !(await row('awaiting').isVisible()); i++) {
      assert.ok(i < 20, `the view never showed the task "awaiting": ${(await tasksPane().innerText()).slice(0, 500)}`);
      await page.waitForTimeout(1000);
      await tasksPane().hover();
      await tasksPane().locator('.action-label[aria-label^="Refresh asyncio Tasks"]').click();
      await page.waitForTimeout(500);
    }
    assert.match((await tasksPane().innerText()).replace(/\s+/g, ' '), /\(Python 3\.11\.\d+\)/);
    await row('awaiting').click();
    await row('awaited').waitFor({ timeout: STEP });
    await screenshot('tasks-3.11');
    await endSession();
  });
});

/** The root nodes of the flame graph panel's tree, as the page's model names them. */
async function roots(frame: Frame): Promise<Array<{ function: string; task?: string; total: number }>> {
  return frame.evaluate(() => {
    const app = (window as any).__dapprof;
    return [...(app.graph.tree?.root?.children?.values() ?? [])].map((n: any) => {
      const info = app.model.keyInfo(app.groupBy, n.key);
      return { function: info.function, task: info.task, total: n.total };
    });
  });
}

test(`the flame graph panel's By task view of a live run on ${ROOT_LABEL} sampled by task`, async (t) => {
  if (typeof rooted === 'string') return t.skip(rooted);
  await step(t, 'async-by-task', async () => {
    if (!rootServing) {
      rootServing = spawn(DAPPROF_BIN, ['serve', '--listen', `127.0.0.1:${rootPort}`, '--python', rooted.path, '--log-level', 'warn'], { stdio: 'ignore' });
      await waitForListening(rootPort);
    }
    await startSession(ROOTED);
    await wb.toolbarButton('Start Profiling').click();
    await wb.toolbarButton('Stop Profiling').waitFor({ timeout: LONG });
    await page.waitForSelector('.tab[aria-label^="Flame Graph"]', { timeout: LONG });
    const flame = await wb.flame(program, STEP);
    // Samples of the running task and of every waiting one.
    await flame.frame.waitForFunction(
      () => {
        const app = (window as any).__dapprof;
        const tasks = new Set(app.model.frames.filter((f: any) => f.task).map((f: any) => f.function));
        return app.state === 'live' && tasks.has('cpu') && tasks.has('fetch-2-1') && app.model.totals.sampleCount >= 100;
      },
      undefined,
      { timeout: LONG, polling: 250 },
    );
    const byTask = flame.frame.getByLabel('By task');
    const waiting = flame.frame.getByLabel('Waiting tasks');
    assert.ok(await waiting.isEnabled(), 'the run samples waiting tasks ("all")');
    if (!(await byTask.isChecked())) await byTask.check();
    if (!(await waiting.isChecked())) await waiting.check();
    // Roots are tasks: Task-1, which every other task of the program is under (a sample of the
    // loop between two tasks has no task, and keeps its thread's stack).
    await flame.frame.waitForFunction(() => {
      const app = (window as any).__dapprof;
      const kids = [...(app.graph.tree?.root?.children?.values() ?? [])];
      return kids.some((n: any) => app.model.keyInfo(app.groupBy, n.key).task);
    }, undefined, { timeout: STEP, polling: 250 });
    const withWaiting = await roots(flame.frame);
    const tasks = withWaiting.filter((r) => r.task);
    assert.deepEqual([...new Set(tasks.map((r) => r.function))], ['Task-1'], JSON.stringify(withWaiting));
    const all = withWaiting.reduce((sum, r) => sum + r.total, 0);
    assert.ok(tasks.reduce((sum, r) => sum + r.total, 0) >= 0.9 * all, JSON.stringify(withWaiting));
    await screenshot('flame-by-task');
    // Without waiting tasks: what ran, the cpu task under Task-1, far fewer samples.
    await waiting.uncheck();
    await flame.frame.waitForFunction(
      (before) => {
        const app = (window as any).__dapprof;
        const kids = [...(app.graph.tree?.root?.children?.values() ?? [])];
        const total = kids.reduce((sum: number, n: any) => sum + n.total, 0);
        return total > 0 && total < before / 3;
      },
      withWaiting.reduce((sum, r) => sum + r.total, 0),
      { timeout: STEP, polling: 250 },
    );
    await screenshot('flame-by-task-running');
    await wb.toolbarButton('Stop Profiling').click();
    await flame.waitForState('Stopped');
    await endSession();
  });
});

test('the extension host logged no error of the extension', async (t) => {
  if (!server) return t.skip('code-server did not start');
  assertNoExtensionErrors(server.userDataDir);
});
