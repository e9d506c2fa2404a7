// End to end in a real VS Code: VS Code on the host attaches to `debugpy --listen` running in a
// container, and profiles it. A code-server of its own, with the packaged extension installed,
// driven in headless Chromium like a person would:
//
// - tests/fixtures/hashing.py runs on CPython 3.14 of the Debian unstable root (E2E_ROOT_PYTHON
//   names another of tests/support/pythons.py's) as pid 1 of a PID and mount namespace of its
//   own, as Docker and Kubernetes run a program (tests/support/containers.py, through
//   tests/support/in_root.c --pid), with debugpy listening on a loopback port. The container
//   shares the host's network (as `docker run --network host`), so the port is reached as a
//   published one is.
// - The workspace's launch.json is the one a user writes for that: a `dapprof` attach with
//   `connect` to the port. F5 attaches; debugpy names the program as pid 1, its pid in the
//   container, which on the host is init.
// - Start Profiling: dapprof finds the host's process in the PID namespace of the connection's
//   other end; the flame graph fills with the program's hash_forever, the panel and the status
//   bar's hover name the host's pid (not 1), and the panel lists the threads by the host's ids. Stop Profiling; Disconnect
//   leaves the program running in its container, which the test then ends.
//
// Making a PID namespace needs root (CI runs the tests as root): without it the steps are skipped,
// saying so. Screenshots go to build/e2e-screenshots/ of the repository as container-NN-NAME.png.
// Inputs (environment): as e2e.test.ts (scripts/e2e.sh sets them), with its run directory in
// E2E_RUN_DIR-container.

import assert from 'node:assert/strict';
import { ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, Server, Socket } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, test, TestContext } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import { CodeServer, sleep } from './code-server';
import { CHROMIUM, CODE_SERVER_BIN, DAPPROF_BIN, LONG, repoRoot, RUN_DIR, SHOTS, STEP, VSIX } from './paths';
import { assertNoExtensionErrors, Steps } from './steps';
import { FlameView, openWorkbench, Workbench } from './workbench';
import { WORKBENCH_SETTINGS } from './workspace';

const RUN = `${RUN_DIR}-container`;
const workspace = join(RUN, 'workspace');
// Inside the repository, which the root binds in at the same path: the container runs the
// workspace's own file, and the frames name it as VS Code does (no pathMappings needed).
const program = join(workspace, 'hashing.py');
const ROOT_LABEL = process.env.E2E_ROOT_PYTHON || 'sid-3.14';
const CONFIG = 'Attach to the container (dapprof)';
const FORWARDED = 'Attach through a port forwarder (dapprof)';
const FORWARDED_PID = 'Attach through a port forwarder, with its host pid (dapprof)';

/** What tests/support/containers.py reports of the program it started in a container. */
interface Boxed {
  /** The program's pid on the host. */
  pid: number;
  /** The program's own line: its pid and thread ids as it sees them, debugpy's port, its Python. */
  report: { pid: number; port: number; version: string; threads: Record<string, number> };
}

let skipped = '';
let box: Boxed | undefined;
let launcher: ChildProcess | undefined;
let server: CodeServer;
let browser: Browser;
let page: Page;
let wb: Workbench;
let flame: FlameView;
let forwarder: Server | undefined;
const forwarded = new Set<Socket>();
const steps = new Steps('e2e container', SHOTS, 'container-', () => page);
const note = (what: string) => steps.note(what);
const screenshot = (name: string) => steps.screenshot(name);
const step = (t: TestContext, name: string, body: () => Promise<void>) => {
  if (skipped) return Promise.resolve(t.skip(skipped));
  return steps.step(t, name, body);
};

/** Starts the program in its container; resolves with the launcher's line once it runs. */
function startContainer(): Promise<Boxed | { missing: string }> {
  const child = spawn('/usr/bin/python3', [join(repoRoot, 'tests/support/containers.py'), ROOT_LABEL, program, '--listen'], { stdio: ['pipe', 'pipe', 'pipe'] });
  launcher = child;
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the container did not report within ${STEP} ms: ${stderr}`)), STEP);
    createInterface({ input: child.stdout! }).once('line', (line) => {
      clearTimeout(timer);
      resolve(JSON.parse(line));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`tests/support/containers.py exited (${code}) before reporting: ${stderr}`));
    });
  });
}

/** The host's id of each thread of `pid`, by the id the program knows it by (NSpid's last). */
function hostTids(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const line = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('NSpid:'));
    if (line) out.set(Number(line.trim().split(/\s+/).pop()), Number(tid));
  }
  return out;
}

/**
 * Closing its standard input ends the container (tests/support/containers.py kills its pid 1, and
 * the PID namespace with it); `force`: SIGKILL to the program, if that did not.
 */
async function endContainer(force: boolean): Promise<void> {
  if (!launcher) return;
  const child = launcher;
  if (child.exitCode === null && child.signalCode === null) {
    // A timer left running would keep the test process alive after the last test.
    let timer: NodeJS.Timeout | undefined;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.stdin?.end();
    await Promise.race([exited, new Promise<void>((r) => (timer = setTimeout(r, STEP)))]);
    clearTimeout(timer);
  }
  if (!force || !box || !existsSync(`/proc/${box.pid}`)) return;
  try {
    process.kill(box.pid, 'SIGKILL'); // a PID namespace ends with its pid 1
  } catch {
    // gone meanwhile
  }
  launcher.kill('SIGKILL');
}

/**
 * A TCP relay to debugpy's port run by this test process, as docker-proxy or kubectl
 * port-forward are: the debug connection's other end is then a process of the host's PID
 * namespace, where debugpy's pid 1 is init.
 */
function startForwarder(port: number): Promise<number> {
  forwarder = createServer((client) => {
    const target = new Socket();
    forwarded.add(client).add(target);
    target.connect(port, '127.0.0.1');
    client.pipe(target).pipe(client);
    const close = () => {
      client.destroy();
      target.destroy();
    };
    client.on('error', close).on('close', close);
    target.on('error', close).on('close', close);
  });
  return new Promise((resolve) => forwarder!.listen(0, '127.0.0.1', () => resolve((forwarder!.address() as { port: number }).port)));
}

before(async () => {
  assert.ok(DAPPROF_BIN && existsSync(DAPPROF_BIN), `DAPPROF_BIN must name the dapprof executable (got "${DAPPROF_BIN}")`);
  assert.ok(existsSync(VSIX), `${VSIX} not found: package the extension first (npm run package)`);
  if (process.getuid?.() !== 0) {
    skipped = 'a container (a PID and mount namespace of its own) needs root to make: run as root';
    return;
  }
  rmSync(RUN, { recursive: true, force: true });
  mkdirSync(join(workspace, '.vscode'), { recursive: true });
  mkdirSync(SHOTS, { recursive: true });
  copyFileSync(join(repoRoot, 'tests/fixtures/hashing.py'), program);
  const started = await startContainer();
  if ('missing' in started) {
    skipped = started.missing;
    return;
  }
  box = started;
  assert.equal(box.report.pid, 1, 'the program is pid 1 of its container');
  assert.notEqual(box.pid, 1);
  note(`${program} runs in a container: pid 1 there, ${box.pid} on the host; debugpy listens on port ${box.report.port}`);
  const forwardedPort = await startForwarder(box.report.port);
  // As a user writes them for a container whose debugpy port is published on the host; through a
  // forwarder, dapprof cannot tell the process, and profileProcessId names it.
  const attach = (name: string, port: number, extra: object = {}) => ({ type: 'dapprof', request: 'attach', name, connect: { host: '127.0.0.1', port }, justMyCode: true, ...extra });
  const configurations = [attach(CONFIG, box.report.port), attach(FORWARDED, forwardedPort), attach(FORWARDED_PID, forwardedPort, { profileProcessId: box.pid })];
  writeFileSync(join(workspace, '.vscode', 'launch.json'), JSON.stringify({ version: '0.2.0', configurations }, null, 2));
  server = new CodeServer({ bin: CODE_SERVER_BIN, runDir: RUN, userSettings: WORKBENCH_SETTINGS, machineSettings: { 'dapprof.path': DAPPROF_BIN } });
  assert.match(server.installExtension(VSIX), /successfully installed/);
  await server.start(workspace, LONG);
  note(`code-server answers at ${server.url}`);
  browser = await launchChromium(CHROMIUM, join(RUN, 'chromium'));
  page = await openWorkbench(browser, server.url, workspace, STEP, LONG);
  wb = new Workbench(page);
  // F5 starts the launch configuration once the workbench has read the debuggers' contributions.
  await wb.waitForCommand('Debug: Select and Start Debugging');
  note('workbench loaded');
});

after(async () => {
  for (const c of forwarded) c.destroy();
  forwarder?.close();
  await browser?.close().catch(() => undefined);
  await server?.stop();
  await endContainer(true);
});

test('F5 attaches to debugpy listening in a container; the debug toolbar offers Start Profiling', async (t) => {
  await step(t, 'container-attach', async () => {
    await page.keyboard.press('F5');
    await page.waitForSelector('.debug-toolbar', { timeout: LONG });
    await wb.toolbarButton('Start Profiling').waitFor({ timeout: LONG });
    await page.waitForSelector('.pane-header .call-stack-state-message:has-text("Running")', { timeout: LONG });
    await screenshot('attached');
  });
});

test("Start Profiling profiles the container's program: its functions, under the host's pid and thread ids", async (t) => {
  await step(t, 'container-profile', async () => {
    await wb.toolbarButton('Start Profiling').click();
    await wb.toolbarButton('Stop Profiling').waitFor({ timeout: LONG });
    await page.waitForSelector('.tab[aria-label^="Flame Graph"]', { timeout: LONG });
    flame = await wb.flame(program, STEP);
    await flame.waitForFunctions(program, ['hash_forever'], 20, LONG);
    // debugpy said pid 1; the panel names the process dapprof samples: the host's, never its init.
    const who = await flame.frame.$eval('#stats', (e) => (e as HTMLElement).dataset.who ?? '');
    assert.equal(who, `${CONFIG}, pid ${box!.pid}, Python ${box!.report.version}`);
    // The thread choices are the host's ids of the program's threads (the container knows others).
    const hasher = hostTids(box!.pid).get(box!.report.threads.hasher);
    assert.ok(hasher && hasher !== box!.report.threads.hasher, `the hashing thread's host id (${hasher}) differs from its id in the container`);
    await flame.frame.waitForFunction((tid) => [...document.querySelectorAll('#thread option')].some((o) => (o as HTMLOptionElement).value === String(tid)), hasher, { timeout: STEP });
    // The status bar item's hover says which process is profiled, on screen.
    await page.locator('.statusbar-item:has(.codicon-flame)').filter({ hasText: /samples ·/ }).first().hover();
    await page.locator('.monaco-hover', { hasText: `process ${box!.pid},` }).first().waitFor({ timeout: STEP });
    await sleep(500); // the hover fades in
    await screenshot('profiling');
    await page.mouse.move(0, 0);
  });
});

test('Stop Profiling stops the run; Disconnect leaves the program running in its container', async (t) => {
  await step(t, 'container-disconnect', async () => {
    await wb.toolbarButton('Stop Profiling').click();
    await flame.waitForState('Stopped');
    await wb.toolbarButton('Start Profiling').waitFor({ timeout: LONG });
    await screenshot('stopped');
    await wb.toolbarButton('Disconnect').click();
    await page.waitForSelector('.debug-toolbar', { state: 'hidden', timeout: LONG });
    assert.ok(existsSync(`/proc/${box!.pid}`), 'the program still runs after the debugger disconnected');
    assert.equal(launcher!.exitCode, null, 'the container still runs');
    const errors = (await wb.notifications()).filter((n) => /error|could not|failed/i.test(n));
    assert.deepEqual(errors, []);
    await screenshot('disconnected');
  });
});

test('through a port forwarder, Start Profiling is refused saying why; with profileProcessId it profiles the program', async (t) => {
  await step(t, 'container-forwarded', async () => {
    await wb.startConfiguration(FORWARDED);
    await page.waitForSelector('.debug-toolbar', { timeout: LONG });
    await wb.toolbarButton('Start Profiling').waitFor({ timeout: LONG });
    await wb.toolbarButton('Start Profiling').click();
    // dapprof reads no process it cannot tell is the debuggee: it says so, and what to do.
    const refusal = page.locator('.notifications-toasts .notification-list-item').filter({ hasText: /another PID namespace/ });
    await refusal.first().waitFor({ timeout: LONG });
    assert.match(await refusal.first().innerText(), /processId/);
    await screenshot('forwarded-refused');
    await wb.toolbarButton('Start Profiling').waitFor({ timeout: LONG });
    await wb.toolbarButton('Disconnect').click();
    await page.waitForSelector('.debug-toolbar', { state: 'hidden', timeout: LONG });

    await wb.startConfiguration(FORWARDED_PID);
    await page.waitForSelector('.debug-toolbar', { timeout: LONG });
    await wb.toolbarButton('Start Profiling').click();
    await wb.toolbarButton('Stop Profiling').waitFor({ timeout: LONG });
    flame = await wb.flame(program, STEP);
    await flame.frame.waitForFunction((name) => (document.getElementById('stats')?.dataset.who ?? '').startsWith(name), FORWARDED_PID, { timeout: LONG });
    await flame.waitForFunctions(program, ['hash_forever'], 20, LONG);
    const who = await flame.frame.$eval('#stats', (e) => (e as HTMLElement).dataset.who ?? '');
    assert.equal(who, `${FORWARDED_PID}, pid ${box!.pid}, Python ${box!.report.version}`);
    await screenshot('forwarded-profiling');
    await wb.toolbarButton('Stop Profiling').click();
    await flame.waitForState('Stopped');
    await wb.toolbarButton('Disconnect').click();
    await page.waitForSelector('.debug-toolbar', { state: 'hidden', timeout: LONG });
    assert.ok(existsSync(`/proc/${box!.pid}`), 'the program still runs after the debugger disconnected');
  });
});

test('the extension host logged no error of the extension', async (t) => {
  if (skipped) return t.skip(skipped);
  if (!server) return t.skip('code-server did not start');
  assertNoExtensionErrors(server.userDataDir);
});

test('closing the container ends the program', async (t) => {
  if (skipped) return t.skip(skipped);
  await endContainer(false);
  const deadline = Date.now() + STEP;
  while (existsSync(`/proc/${box!.pid}`) && Date.now() < deadline) await sleep(100);
  assert.ok(!existsSync(`/proc/${box!.pid}`), `process ${box!.pid} outlived its container`);
});
