// End to end in a real VS Code, without a debugger: the commands that profile Python through
// `dapprof stdio --profile-only` (the `dapprof-profile` configurations), which run as profile-only
// runs, not debug sessions: no debug toolbar (whose Pause and Step a profiler cannot honour), but
// Stop and Restart in the status bar beside the sample count. A code-server of its own
// (after e2e.test.ts, which has its own), with the packaged extension installed, driven in
// headless Chromium like a person would:
//
// - dapprof: Profile Process… (from the command palette) lists the running Python processes
//   (`dapprof ps --json`); the one the test started (test/e2e/fixture/busy.py) is picked, the
//   run attaches to it and profiling starts by itself: the flame graph fills with busy.py's
//   functions; no debug toolbar shows. Stop leaves the process running.
// - dapprof: Profile Python File (the button in the title bar of busy.py open in the editor):
//   dapprof runs it, the flame graph fills with its functions; Restart runs it again (a new
//   process); when the program ends (the test creates the file it waits for), the panel shows
//   the run stopped and the controls go.
// - A launch.json attach configuration naming a process that is not Python: the extension shows
//   dapprof's reason (the attach request's error response) and nothing runs.
//
// Screenshots go to build/e2e-screenshots/ of the repository as profile-only-NN-NAME.png.
// Inputs (environment): as e2e.test.ts (scripts/e2e.sh sets them), with its run directory in
// E2E_RUN_DIR-profile.

import assert from 'node:assert/strict';
import { ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test, TestContext } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import { CodeServer, sleep } from './code-server';
import { CHROMIUM, clientRoot, CODE_SERVER_BIN, DAPPROF_BIN, LONG, RUN_DIR, SHOTS, STEP, VSIX } from './paths';
import { assertNoExtensionErrors, Steps } from './steps';
import { FlameView, openWorkbench, Workbench } from './workbench';
import { WORKBENCH_SETTINGS } from './workspace';

const FIXTURE = join(clientRoot, 'test/e2e/fixture/busy.py');
const RUN = `${RUN_DIR}-profile`;

const workspace = join(RUN, 'workspace');
const program = join(workspace, 'busy.py');
/** What the process the test starts waits for; and the program VS Code starts (busy.py's default). */
const attachFlag = join(workspace, 'attach-done.flag');
const fileFlag = join(workspace, 'profile-done.flag');

let server: CodeServer;
let browser: Browser;
let page: Page;
let wb: Workbench;
let busy: ChildProcess | undefined;
/** A process that is not Python, which dapprof refuses to attach to. */
let notPython: ChildProcess | undefined;
const REFUSED = 'attach to sleep (not Python)';
const steps = new Steps('e2e profile-only', SHOTS, 'profile-only-', () => page);
const note = (what: string) => steps.note(what);
const screenshot = (name: string) => steps.screenshot(name);
const step = (t: TestContext, name: string, body: () => Promise<void>) => steps.step(t, name, body);

function alive(p: ChildProcess | undefined): boolean {
  return !!p && p.exitCode === null && p.signalCode === null;
}

/** The flame graph panel once it is open and loaded. */
async function flameGraph(): Promise<FlameView> {
  await page.waitForSelector('.tab[aria-label^="Flame Graph"]', { timeout: LONG });
  return wb.flame(program, STEP);
}

/** A control of the profile-only run in the status bar: Stop or Restart. */
function runButton(name: 'Stop' | 'Restart') {
  return page.locator(`.statusbar-item:has(.codicon-debug-${name.toLowerCase()})`).first();
}

/** Fails with the notification's text as soon as VS Code shows an error, else waits for `what`. */
async function unlessError<T>(what: Promise<T>): Promise<T> {
  const error = page.waitForSelector('.notifications-toasts .notification-list-item:has(.codicon-error)', { timeout: LONG + STEP }).then(async () => {
    throw new Error(`VS Code shows an error: ${(await wb.notifications()).join(' | ')}`);
  });
  error.catch(() => undefined);
  return Promise.race([what, error]);
}

before(async () => {
  assert.ok(DAPPROF_BIN && existsSync(DAPPROF_BIN), `DAPPROF_BIN must name the dapprof executable (got "${DAPPROF_BIN}")`);
  assert.ok(existsSync(VSIX), `${VSIX} not found: package the extension first (npm run package)`);
  rmSync(RUN, { recursive: true, force: true });
  mkdirSync(workspace, { recursive: true });
  // e2e.test.ts, run before, starts the screenshot directory afresh; this one adds to it.
  mkdirSync(SHOTS, { recursive: true });
  copyFileSync(FIXTURE, program);
  notPython = spawn('/bin/sleep', ['600'], { stdio: 'ignore' });
  mkdirSync(join(workspace, '.vscode'));
  writeFileSync(
    join(workspace, '.vscode', 'launch.json'),
    JSON.stringify({ version: '0.2.0', configurations: [{ type: 'dapprof-profile', request: 'attach', name: REFUSED, processId: notPython.pid }] }, null, 2),
  );
  server = new CodeServer({
    bin: CODE_SERVER_BIN,
    runDir: RUN,
    userSettings: WORKBENCH_SETTINGS,
    machineSettings: { 'dapprof.path': DAPPROF_BIN, 'dapprof.python': '/usr/bin/python3' },
  });
  assert.match(server.installExtension(VSIX), /successfully installed/);
  await server.start(workspace, LONG);
  note(`code-server answers at ${server.url}`);
  browser = await launchChromium(CHROMIUM, join(RUN, 'chromium'));
  page = await openWorkbench(browser, server.url, workspace, STEP, LONG);
  wb = new Workbench(page);
  note('workbench loaded');
});

after(async () => {
  writeFileSync(attachFlag, '');
  writeFileSync(fileFlag, '');
  if (alive(busy)) busy!.kill('SIGKILL');
  notPython?.kill('SIGKILL');
  await browser?.close().catch(() => undefined);
  await server?.stop();
});

test('dapprof: Profile Process… lists the Python process the test started; picking it profiles it without a debugger', async (t) => {
  await step(t, 'profile-process', async () => {
    // Started by the test, as any program would be: no debugpy in it.
    busy = spawn('/usr/bin/python3', [program, attachFlag], { cwd: workspace, stdio: 'ignore' });
    const pid = busy.pid!;
    await sleep(500);
    assert.ok(alive(busy), 'busy.py runs');
    await wb.runExtensionCommand('dapprof: Profile Process…');
    // The quick pick of `dapprof ps --json`: ID and command line, user and Python version.
    const row = page.locator('.quick-input-widget .monaco-list-row').filter({ hasText: `/usr/bin/python3 ${program}` }).filter({ hasText: String(pid) });
    await unlessError(row.first().waitFor({ timeout: LONG }));
    assert.match(await row.first().innerText(), /root · Python 3\.\d+/);
    await page.keyboard.type(String(pid));
    await row.first().waitFor();
    await screenshot('profile-process-pick');
    await row.first().click();
    note(`picked process ${pid}`);
    // dapprof attaches and profiling starts by itself: the status bar offers Stop.
    await unlessError(runButton('Stop').waitFor({ timeout: LONG }));
    const flame = await flameGraph();
    await flame.waitForFunctions(program, ['main', 'spin', 'crunch'], 50, LONG);
    const [crunch] = await flame.nodes(['spin', 'crunch']);
    assert.ok(crunch && crunch.w > 0, 'spin > crunch is drawn');
    await page.locator('.statusbar-item:has(.codicon-flame)').filter({ hasText: /[\d,]+ samples · 100 Hz/ }).first().waitFor({ timeout: LONG });
    // The table beside the graph is refreshed a little later than the graph (table.ts).
    await flame.frame.waitForSelector('#table tbody tr', { timeout: LONG });
    await screenshot('profile-process-live');
    // Not a debug session: no debug toolbar with a Pause or Step that would answer an error;
    // the run's controls are Stop and Restart beside its sample count.
    assert.equal(await page.locator('.debug-toolbar').isVisible(), false, 'no debug toolbar');
    await runButton('Restart').waitFor();
    assert.match((await runButton('Stop').getAttribute('aria-label')) ?? (await runButton('Stop').innerText()), /Stop/);
    await screenshot('profile-only-controls');

    // Stop ends the run; a process profiled by attaching goes on running.
    await runButton('Stop').click();
    await flame.waitForState('Stopped');
    await runButton('Stop').waitFor({ state: 'hidden', timeout: LONG });
    await sleep(1000);
    assert.ok(alive(busy), 'the process still runs after the session ended');
    writeFileSync(attachFlag, '');
    for (let i = 0; alive(busy); i++) {
      assert.ok(i < 100, 'busy.py ends once its flag exists');
      await sleep(100);
    }
  });
});

test('dapprof: Profile Python File runs busy.py under dapprof; the graph shows it live, then stopped when it ends', async (t) => {
  await step(t, 'profile-file', async () => {
    // The first step's "Profiling stopped" toast would hide part of this one's screenshots.
    await wb.runCommand('Notifications: Clear All Notifications');
    // The Run and Debug view is still open from the first step: back to the Explorer.
    await page.keyboard.press('Control+Shift+e');
    await page.locator('.explorer-folders-view .monaco-list-row[aria-label="busy.py"]').dblclick({ timeout: LONG });
    await page.waitForSelector('.editor-group-container.active .tab.active[data-resource-name="busy.py"]');
    await page.waitForSelector('.editor-group-container.active .monaco-editor .view-lines');
    // The flame button in the editor's title bar of a Python file (its tooltip is the command's title).
    const button = page.locator('.editor-group-container.active .editor-actions .action-label[aria-label="Profile Python File"]').first();
    await button.waitFor({ timeout: LONG });
    await button.click();
    await unlessError(runButton('Stop').waitFor({ timeout: LONG }));
    const flame = await flameGraph();
    await flame.waitForFunctions(program, ['main', 'spin', 'crunch'], 50, LONG);
    const [crunch] = await flame.nodes(['spin', 'crunch']);
    assert.ok(crunch && crunch.w > 0, 'spin > crunch is drawn');
    await flame.frame.waitForSelector('#table tbody tr', { timeout: LONG });
    await screenshot('profile-file-live');

    // Restart: the program is stopped and run again, a new process, profiled from its start.
    const pidOf = () => flame.frame.evaluate(() => /pid (\d+)/.exec(document.getElementById('stats')?.dataset.who ?? '')?.[1] ?? '');
    const firstPid = await pidOf();
    assert.ok(firstPid, 'the panel names the process');
    await runButton('Restart').click();
    await flame.frame.waitForFunction((p) => {
      const pid = /pid (\d+)/.exec(document.getElementById('stats')?.dataset.who ?? '')?.[1];
      return pid && pid !== p && document.getElementById('state')?.textContent === 'Live';
    }, firstPid, { timeout: LONG });
    await flame.waitForFunctions(program, ['main', 'spin', 'crunch'], 20, LONG);
    note(`restarted: process ${firstPid}, then ${await pidOf()}`);

    // busy.py ends: dapprof stops the run (profilingStopped) and the controls go.
    writeFileSync(fileFlag, '');
    await flame.waitForState('Stopped', LONG);
    await runButton('Stop').waitFor({ state: 'hidden', timeout: LONG });
    const stats = await flame.frame.evaluate(() => document.getElementById('stats')?.textContent ?? '');
    assert.match(stats, /[\d,]+ samples/);
    await screenshot('profile-file-stopped');
  });
});

test('the stopped run compared with a profile file picked in VS Code\'s file dialog: a differential flame graph', async (t) => {
  await step(t, 'compare-with-file', async () => {
    // A profile recorded elsewhere (collapsed stacks), in which busy.py spent its time in main only.
    const baseline = join(workspace, 'baseline.collapsed');
    writeFileSync(baseline, `<module> (${program}:1);main (${program}:2) 40\n`);
    const flame = await flameGraph();
    await flame.frame.selectOption('#baseline', { label: 'Compare with a file\u2026' });
    // First the choice between the runs kept so far and a profile file.
    const fileChoice = page.locator('.quick-input-widget .monaco-list-row').filter({ hasText: 'A profile file\u2026' }).first();
    await fileChoice.waitFor({ timeout: LONG });
    await fileChoice.click();
    // VS Code's own open dialog (in the browser: its quick-input file picker), given the path.
    // The dialog lists the workspace folder once it has read it; the file is picked by its row.
    const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: 'baseline.collapsed' }).first();
    await row.waitFor({ timeout: LONG });
    await row.click();
    const accept = page.locator('.quick-input-widget .quick-input-action .monaco-button', { hasText: 'Compare' });
    // Clicking a file's row accepts it in some VS Code versions; else the button does. (What
    // counts is the legend below.)
    await page.waitForTimeout(500);
    if (await accept.isVisible()) await accept.click({ timeout: 3000 }).catch(() => undefined);
    await flame.frame.waitForFunction(() => /Compared with baseline\.collapsed/.test(document.getElementById('diff-legend')?.textContent ?? ''), undefined, { timeout: LONG });
    assert.equal(await flame.frame.$eval('#baseline', (e) => (e as HTMLSelectElement).selectedOptions[0].textContent), 'vs baseline.collapsed');
    // spin and crunch are new against the baseline: the diff table has them gained.
    const gained = await flame.frame.$$eval('#diff-table tbody tr', (trs) => trs.filter((tr) => Number((tr as HTMLElement).dataset.delta) > 0).map((tr) => (tr as HTMLElement).dataset.path ?? ''));
    assert.ok(gained.some((p) => p.endsWith('spin')) && gained.some((p) => p.endsWith('crunch')), JSON.stringify(gained));
    await screenshot('profile-file-compared');
  });
});

test('attaching to a process that is not Python shows dapprof\'s reason, and nothing runs', async (t) => {
  await step(t, 'attach-refused', async () => {
    await wb.startConfiguration(REFUSED);
    // The extension shows dapprof's refusal of the attach: a notification (or a dialog).
    const shown = page.locator('.monaco-dialog-box, .notifications-toasts .notification-list-item:has(.codicon-error)').first();
    await shown.waitFor({ timeout: LONG });
    const text = (await shown.innerText()).replace(/\s+/g, ' ');
    note(`attach refused: ${text}`);
    assert.match(text, new RegExp(`${notPython!.pid}`), 'the message names the process');
    assert.match(text, /python/i, 'and says it is not Python');
    await screenshot('profile-attach-refused');
    await page.keyboard.press('Escape');
    assert.equal(await page.locator('.debug-toolbar').isVisible(), false, 'no session runs');
    assert.equal(await runButton('Stop').isVisible(), false, 'no run either');
  });
});

test('the extension host logged no error of the extension', async (t) => {
  // As in e2e.test.ts: errors thrown by the extension are logged by the extension host, attributed to dapprof.dapprof.
  if (!server) return t.skip('code-server did not start');
  assertNoExtensionErrors(server.userDataDir);
});
