// End to end in a real VS Code: Start Profiling in a `debugpy` debug session started from a
// launch.json that knows nothing of dapprof. The Python extension, whose debugger contributes the
// `debugpy` type, cannot be installed on the test machines: a small test-only extension
// (test/e2e/debugpy-type/) contributes the type as that extension does (its adapter is
// `python -m debugpy.adapter`, a child process's session is started from debugpy's
// `debugpyAttach` event). debugpy and its adapter are real; dapprof is not in that session at all.
//
// - The session of spawner.py (which starts a child process) is debugged by debugpy alone; the
//   debug toolbar offers Start Profiling all the same (the session announced its process).
// - Start Profiling attaches a profile-only dapprof to that process and to the child's: the
//   flame graph fills with the child's functions, the panel says the run is attached to the
//   debug session's process, and the parent's run is there too when its session is focused.
// - Stop Profiling stops it; the sessions end with the program, and the runs with them.
//
// Screenshots go to build/e2e-screenshots/ of the repository as attached-NN-NAME.png. Inputs
// (environment): as e2e.test.ts, with its run directory in E2E_RUN_DIR-attached, and
// DEBUGPY_TYPE_VSIX, the test-only extension packaged (scripts/e2e.sh packages it).

import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test, TestContext } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import { CodeServer } from './code-server';
import { CHROMIUM, clientRoot, CODE_SERVER_BIN, DAPPROF_BIN, LONG, RUN_DIR, SHOTS, STEP, VSIX } from './paths';
import { assertNoExtensionErrors, Steps } from './steps';
import { FlameView, openWorkbench, Workbench } from './workbench';
import { WORKBENCH_SETTINGS } from './workspace';

const RUN = `${RUN_DIR}-attached`;
const DEBUGPY_TYPE_VSIX = process.env.DEBUGPY_TYPE_VSIX ?? '';
const workspace = join(RUN, 'workspace');
const spawner = join(workspace, 'spawner.py');
const childFlag = join(workspace, 'child-done.flag');
/** As a user's launch.json for the Python extension has it: nothing of dapprof. */
const CONFIG = 'Python Debugger: spawner.py';

let server: CodeServer;
let browser: Browser;
let page: Page;
let wb: Workbench;
const steps = new Steps('e2e attached', SHOTS, 'attached-', () => page);
const note = (what: string) => steps.note(what);
const screenshot = (name: string) => steps.screenshot(name);
const step = (t: TestContext, name: string, body: () => Promise<void>) => steps.step(t, name, body);

/** A session's row in the Call Stack view. */
function sessionRow(name: RegExp | string) {
  return page.locator('.debug-call-stack .monaco-list-row').filter({ hasText: name }).first();
}

before(async () => {
  assert.ok(DAPPROF_BIN && existsSync(DAPPROF_BIN), `DAPPROF_BIN must name the dapprof executable (got "${DAPPROF_BIN}")`);
  assert.ok(existsSync(VSIX), `${VSIX} not found: package the extension first (npm run package)`);
  assert.ok(existsSync(DEBUGPY_TYPE_VSIX), `DEBUGPY_TYPE_VSIX must name the test-only debugpy extension packaged (got "${DEBUGPY_TYPE_VSIX}")`);
  rmSync(RUN, { recursive: true, force: true });
  mkdirSync(join(workspace, '.vscode'), { recursive: true });
  mkdirSync(SHOTS, { recursive: true });
  copyFileSync(join(clientRoot, 'test/e2e/fixture/spawner.py'), spawner);
  writeFileSync(
    join(workspace, '.vscode', 'launch.json'),
    JSON.stringify({ version: '0.2.0', configurations: [{ type: 'debugpy', request: 'launch', name: CONFIG, program: '${workspaceFolder}/spawner.py', args: [childFlag], console: 'internalConsole' }] }, null, 2),
  );
  server = new CodeServer({
    bin: CODE_SERVER_BIN,
    runDir: RUN,
    // Debian's python3 has debugpy (python3-debugpy): it runs the adapter and the program.
    userSettings: { ...WORKBENCH_SETTINGS, 'debugpyType.python': '/usr/bin/python3' },
    machineSettings: { 'dapprof.path': DAPPROF_BIN },
  });
  assert.match(server.installExtension(VSIX), /successfully installed/);
  assert.match(server.installExtension(DEBUGPY_TYPE_VSIX), /successfully installed/);
  await server.start(workspace, LONG);
  note(`code-server answers at ${server.url}`);
  browser = await launchChromium(CHROMIUM, join(RUN, 'chromium'));
  page = await openWorkbench(browser, server.url, workspace, STEP, LONG);
  wb = new Workbench(page);
  note('workbench loaded');
});

after(async () => {
  writeFileSync(childFlag, '');
  await browser?.close().catch(() => undefined);
  await server?.stop();
});

let flame: FlameView;

test('a debugpy session from an unchanged launch.json offers Start Profiling; it profiles the program and its child process', async (t) => {
  await step(t, 'debugpy-start', async () => {
    // The palette lists the debug commands once the workbench has read every contribution.
    await wb.waitForCommand('Debug: Select and Start Debugging');
    await wb.startConfiguration(CONFIG);
    await page.waitForSelector('.debug-toolbar', { timeout: LONG });
    // debugpy announced the child; the test-only extension started its session, as the Python extension does.
    const child = sessionRow(/^\s*Subprocess \d+/);
    await child.waitFor({ timeout: LONG });
    await sessionRow(CONFIG).click();
    // The session's adapter is debugpy's, which knows nothing of profiling: offered all the same.
    await wb.toolbarButton('Start Profiling').waitFor({ timeout: LONG });
    await screenshot('debugpy-start-button');
    await wb.toolbarButton('Start Profiling').click();
    await wb.toolbarButton('Stop Profiling').waitFor({ timeout: LONG });
    await page.waitForSelector('.tab[aria-label^="Flame Graph"]', { timeout: LONG });
    flame = await wb.flame(spawner, STEP);
    // The child's run, started with the parent's, is shown (it started last).
    await flame.waitForFunctions(spawner, ['child_main', 'child_work'], 20, LONG);
    const path = await flame.frame.$eval('#run-path', (e) => e.textContent ?? '');
    assert.equal(path, "attached to the debug session's process");
    await screenshot('debugpy-child-profiling');
  });
});

test("the parent session's own run is there too; Stop Profiling stops it; the runs end with their sessions", async (t) => {
  await step(t, 'debugpy-parent', async () => {
    // Focusing the parent's session shows its run (the process that waits for its child): the
    // panel follows the focused session (it is on the child's run, started last).
    await sessionRow(/^\s*Subprocess \d+/).click();
    await sessionRow(CONFIG).click();
    await flame.frame.waitForFunction((name) => (document.getElementById('stats')?.dataset.who ?? '').startsWith(`${name} (process `), CONFIG, { timeout: LONG });
    await wb.toolbarButton('Stop Profiling').click();
    await flame.waitForState('Stopped');
    await wb.toolbarButton('Start Profiling').waitFor({ timeout: LONG });
    await screenshot('debugpy-parent-stopped');
    // Back to the child's run, still going; then the child finishes, then the parent: both
    // sessions end, and the child's run with its session.
    await sessionRow(/^\s*Subprocess \d+/).click();
    await flame.frame.waitForFunction(() => (document.getElementById('stats')?.dataset.who ?? '').startsWith('Subprocess '), undefined, { timeout: LONG });
    await flame.waitForState('Live');
    writeFileSync(childFlag, 'go\n');
    await page.waitForSelector('.debug-toolbar', { state: 'hidden', timeout: LONG });
    await page.locator('.statusbar-item:has(.codicon-flame)').filter({ hasText: /samples ·/ }).first().waitFor({ state: 'hidden', timeout: LONG });
    const errors = (await wb.notifications()).filter((n) => /error|could not|failed/i.test(n));
    assert.deepEqual(errors, []);
  });
});

test('the extension host logged no error of the extension', async (t) => {
  if (!server) return t.skip('code-server did not start');
  assertNoExtensionErrors(server.userDataDir);
});
