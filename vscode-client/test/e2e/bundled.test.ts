// End to end, the platform .vsix alone: code-server with dapprof-linux-x64-VERSION.vsix installed
// and no dapprof.path, as on a machine where nothing else of dapprof is installed. F5 debugs
// test/e2e/fixture/app.py through the dapprof inside the extension (the process running is that
// file), Start Profiling fills the flame graph; then dapprof.path naming a file that is not a
// program makes the next F5 fail with the extension's message saying so.
//
// Inputs (environment): DAPPROF_PLATFORM_VSIX (required), CODE_SERVER_BIN, E2E_RUN_DIR,
// E2E_SCREENSHOTS, CHROMIUM (scripts/e2e.sh sets them).

import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test, TestContext } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import { CodeServer } from './code-server';
import { Workbench } from './workbench';
import { WORKBENCH_SETTINGS } from './workspace';

const clientRoot = process.env.E2E_CLIENT_ROOT ?? join(__dirname, '../../..');
const VSIX = process.env.DAPPROF_PLATFORM_VSIX ?? '';
const CODE_SERVER_BIN = process.env.CODE_SERVER_BIN ?? join(clientRoot, 'test/e2e/node_modules/.bin/code-server');
const RUN_DIR = (process.env.E2E_RUN_DIR ?? join(clientRoot, '../build/e2e/run')) + '-bundled';
const SHOTS = join(process.env.E2E_SCREENSHOTS ?? join(clientRoot, '../build/e2e-screenshots'), 'bundled');
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const LONG = 90_000;

const workspace = join(RUN_DIR, 'workspace');
const program = join(workspace, 'app.py');
const flag = join(workspace, 'continue.flag');
const CONFIG = 'app.py (bundled dapprof)';

let server: CodeServer;
let browser: Browser;
let page: Page;
let wb: Workbench;
let shot = 0;
let broken = '';

async function screenshot(name: string): Promise<void> {
  await page.screenshot({ path: join(SHOTS, `${String(++shot).padStart(2, '0')}-${name}.png`) });
}

async function step(t: TestContext, name: string, body: () => Promise<void>): Promise<void> {
  if (broken) return void t.skip(`an earlier step failed: ${broken}`);
  try {
    await body();
  } catch (e) {
    broken = name;
    await screenshot(`FAILED-${name}`).catch(() => undefined);
    throw e;
  }
}

/**
 * Starts a launch configuration once the workbench offers it: right after the page loads, the
 * command palette may not know the debug commands yet (they come with the debug contribution).
 */
async function startConfiguration(name: string): Promise<void> {
  const title = 'Debug: Select and Start Debugging';
  for (let attempt = 0; ; attempt++) {
    await page.keyboard.press('Control+Shift+p');
    await page.locator('.quick-input-widget input').fill(`>${title}`);
    const item = page.locator('.quick-input-widget .monaco-list-row').filter({ hasText: title }).first();
    if (await item.waitFor({ timeout: 5000 }).then(() => true, () => false)) break;
    assert.ok(attempt < 12, `the command palette never offered "${title}"`);
    await page.keyboard.press('Escape');
  }
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget .monaco-list-row').filter({ hasText: name }).first().waitFor();
  await page.keyboard.type(name);
  await page.keyboard.press('Enter');
}

/** The installed extension's bin/linux-x64/dapprof: where VS Code unpacked the .vsix. */
function installedBinary(): string {
  const dirs = readdirSync(server.extensionsDir).filter((d) => d.startsWith('dapprof.dapprof-'));
  assert.equal(dirs.length, 1, `one dapprof extension installed: ${dirs.join(', ')}`);
  return join(server.extensionsDir, dirs[0], 'bin', 'linux-x64', 'dapprof');
}

/** Command lines of the running processes whose executable is `exe`. */
function processesOf(exe: string): string[][] {
  const found: string[][] = [];
  exe = realpathSync(exe);
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (readlinkSync(`/proc/${pid}/exe`) !== exe) continue;
      found.push(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

before(async () => {
  assert.ok(VSIX && existsSync(VSIX), `DAPPROF_PLATFORM_VSIX must name the linux-x64 .vsix (got "${VSIX}")`);
  rmSync(RUN_DIR, { recursive: true, force: true });
  mkdirSync(join(workspace, '.vscode'), { recursive: true });
  rmSync(SHOTS, { recursive: true, force: true });
  mkdirSync(SHOTS, { recursive: true });
  copyFileSync(join(clientRoot, 'test/e2e/fixture/app.py'), program);
  const launch = {
    version: '0.2.0',
    configurations: [
      { type: 'dapprof', request: 'launch', name: CONFIG, program: '${workspaceFolder}/app.py', args: ['${workspaceFolder}/continue.flag'], python: '/usr/bin/python3', console: 'internalConsole' },
    ],
  };
  writeFileSync(join(workspace, '.vscode', 'launch.json'), JSON.stringify(launch, null, 2));
  // No dapprof.path anywhere: the extension's own dapprof, and nothing on PATH named dapprof.
  server = new CodeServer({ bin: CODE_SERVER_BIN, runDir: RUN_DIR, userSettings: WORKBENCH_SETTINGS, machineSettings: {} });
  assert.match(server.installExtension(VSIX), /successfully installed/);
  await server.start(workspace, LONG);
  browser = await launchChromium(CHROMIUM, join(RUN_DIR, 'chromium'));
  page = await browser.newPage({ viewport: { width: 1680, height: 1000 }, deviceScaleFactor: 1 });
  page.setDefaultTimeout(60_000);
  wb = new Workbench(page);
  await page.goto(`${server.url}/?folder=${encodeURIComponent(workspace)}`);
  await page.waitForSelector('.monaco-workbench .statusbar', { timeout: LONG });
});

after(async () => {
  await browser?.close().catch(() => undefined);
  await server?.stop();
});

test('the .vsix unpacks its dapprof as an executable, and dapprof.path is unset', async (t) => {
  await step(t, 'installed', async () => {
    const exe = installedBinary();
    assert.ok(statSync(exe).mode & 0o100, `${exe} is executable`);
    const env = { ...process.env, ...server.env() };
    assert.ok(!(env.PATH ?? '').split(':').some((d) => d && existsSync(join(d, 'dapprof'))), 'no dapprof on PATH to fall back on');
  });
});

test('F5 debugs through the bundled dapprof, and Start Profiling fills the flame graph', async (t) => {
  await step(t, 'debug-profile', async () => {
    await startConfiguration(CONFIG);
    await page.waitForSelector('.debug-toolbar', { timeout: LONG });
    await wb.toolbarButton('Start Profiling').waitFor({ timeout: LONG });
    const exe = installedBinary();
    assert.deepEqual(processesOf(exe).map((argv) => argv.slice(1)), [['stdio']], 'VS Code runs `dapprof stdio` from the extension');
    await wb.toolbarButton('Start Profiling').click();
    await wb.toolbarButton('Stop Profiling').waitFor({ timeout: LONG });
    const flame = await wb.flame(program, LONG);
    await flame.waitForFunctions(program, ['main', 'work', 'fibonacci'], 20, LONG);
    await screenshot('bundled-profiling');
    await wb.toolbarButton('Stop Profiling').click();
    await flame.waitForState('Stopped');
    writeFileSync(flag, 'go\n');
    await page.waitForSelector('.debug-toolbar', { state: 'hidden', timeout: LONG });
    const errors = (await wb.notifications()).filter((n) => /error|could not|failed/i.test(n));
    assert.deepEqual(errors, []);
  });
});

test('dapprof.path naming a file that is not a program: F5 says so, and why', async (t) => {
  await step(t, 'broken-path', async () => {
    rmSync(flag, { force: true });
    const bogus = join(workspace, 'not-dapprof');
    writeFileSync(bogus, 'this is not a program\n');
    chmodSync(bogus, 0o755);
    writeFileSync(join(workspace, '.vscode', 'settings.json'), JSON.stringify({ 'dapprof.path': bogus }));
    // The workbench reads the file when it changes; give it that time before F5.
    await new Promise((r) => setTimeout(r, 2000));
    await startConfiguration(CONFIG);
    const expected = `The dapprof named by the setting dapprof.path (${bogus}) does not run: it is not a program`;
    // VS Code shows an adapter factory's error as a dialog or a notification.
    const shown = page.locator('.monaco-dialog-box, .notifications-toasts .notification-list-item').filter({ hasText: expected });
    await shown.first().waitFor({ timeout: LONG });
    await screenshot('broken-path');
    assert.equal(await page.locator('.debug-toolbar').isVisible(), false, 'no session started');
  });
});
