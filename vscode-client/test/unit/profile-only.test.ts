// The profile-only mode (src/extension/profile-only.ts, processes.ts) with the VS Code API
// stubbed: the quick pick built from `dapprof ps --json`, the commands that start
// `dapprof-profile` configurations, the validation of their configurations, the adapter's
// arguments, and the profile-only runs they become (with a real dapprof, the process and
// dapprof real: only VS Code is stubbed).
import { fake, makeSession, resetFake, Uri } from '../support/fake-vscode';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, beforeEach, test } from 'node:test';
import type { ProfilingController } from '../../src/extension/controller';
import { activate } from '../../src/extension/extension';
import { commandLine, parsePs, processItems } from '../../src/extension/processes';
import { ProfileOnlyAdapterFactory, ProfileOnlyConfigurationProvider, PROFILE_ONLY_ARGS } from '../../src/extension/profile-only';
import { clientRoot, repoRoot } from '../support/reference';

const DAPPROF = process.env.DAPPROF_BIN ?? join(repoRoot, 'build/default/src/dapprof');
const skip = existsSync(DAPPROF) ? false : `no dapprof at ${DAPPROF} (build it, or set DAPPROF_BIN)`;
const BUSY = join(clientRoot, 'test/e2e/fixture/busy.py');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(what: string, ok: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const WHY = 'dapprof cannot read process 1 of root: run dapprof as root (sudo), or set /proc/sys/kernel/yama/ptrace_scope to 0 and run as that user.';
const PS = {
  processes: [
    { pid: 1, uid: 0, user: 'root', command: ['/usr/bin/python3', '/srv/app.py'], version: '3.11', own: false, readable: false, why: WHY },
    { pid: 19214, uid: 1000, user: 'ann', command: ['/usr/bin/python3', '-c', 'while True: pass'], version: '3.12', own: true, readable: true },
    { pid: 19300, uid: 1000, user: 'ann', command: ['python3', 'x.py', '$(whoami)'], own: true, readable: true },
  ],
};

const dir = mkdtempSync(join(tmpdir(), 'dapprof-profile-only-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A dapprof that answers --version, and `ps --json` with `ps` (or fails as `failure` says). */
function fakeDapprof(name: string, ps: string, failure = ''): string {
  const out = join(dir, `${name}.json`);
  writeFileSync(out, ps);
  const exe = join(dir, name);
  const psCase = failure ? `echo "${failure}" >&2; exit 3` : `cat '${out}'`;
  writeFileSync(exe, `#!/bin/sh\ncase "$1" in\n  --version) echo "dapprof 9.8.7 (commit 0123456789ab)";;\n  ps) [ "$2" = --json ] || exit 2; ${psCase};;\n  *) exit 2;;\nesac\n`);
  chmodSync(exe, 0o755);
  return exe;
}

let controller: ProfilingController;
let subscriptions: Array<{ dispose(): void }> = [];
beforeEach(() => {
  for (const d of subscriptions) d.dispose();
  resetFake();
  const ctx = { subscriptions: [] as Array<{ dispose(): void }>, extensionUri: Uri.file('/ext') };
  controller = activate(ctx as never);
  subscriptions = ctx.subscriptions;
});

test('the quick pick lists the processes of `dapprof ps --json`: readable ones first, the others with the way to get the permission', () => {
  const items = processItems(parsePs(JSON.stringify(PS)));
  assert.deepEqual(
    items.map((i) => [i.label, i.description, i.detail]),
    [
      ["19214  /usr/bin/python3 -c 'while True: pass'", 'ann · Python 3.12', undefined],
      // "$(" would be an icon in a quick pick: it is shown as typed.
      ["19300  python3 x.py '$\u200b(whoami)'", 'ann', undefined],
      ['1  /usr/bin/python3 /srv/app.py', 'root · Python 3.11 · not readable', `$(lock) ${WHY}`],
    ],
  );
  assert.deepEqual(items.map((i) => i.process.pid), [19214, 19300, 1]);
  assert.equal(commandLine(['a b', "it's", '']), `'a b' 'it'\\''s' ''`);
  // An unreadable entry without a reason still says why it cannot be picked.
  const [bare] = processItems(parsePs(JSON.stringify({ processes: [{ pid: 7, command: [], readable: false }] })));
  assert.deepEqual([bare.label, bare.description, bare.detail], ['7  (no command line)', 'not readable', '$(lock) dapprof cannot read this process (no permission).']);
  // Entries without a usable pid are left out; output that is not the list is an error.
  assert.deepEqual(parsePs('{"processes":[{"pid":0},{"pid":"3"},null,{"pid":5,"command":["python"]}]}').map((p) => p.pid), [5]);
  assert.throws(() => parsePs('Usage: dapprof ps'), /not JSON/);
  assert.throws(() => parsePs('{"pids":[]}'), /no "processes" list/);
});

test('Profile Process… attaches a profile-only session to the process picked; an unreadable one shows dapprof\'s message instead', async () => {
  fake.config = { 'dapprof.path': fakeDapprof('dapprof-ps', JSON.stringify(PS)) };
  fake.quickPick = "19214  /usr/bin/python3 -c 'while True: pass'";
  assert.equal(await fake.commands.get('dapprof.profileProcess')!(), true);
  assert.equal(fake.quickPickItems[0].length, 3);
  assert.deepEqual(fake.started.map((s) => s.config), [{ type: 'dapprof-profile', request: 'attach', name: 'Profile 19214', processId: 19214 }]);

  fake.quickPick = '1  /usr/bin/python3 /srv/app.py';
  assert.equal(await fake.commands.get('dapprof.profileProcess')!(), false);
  assert.equal(fake.started.length, 1, 'no session for a process dapprof cannot read');
  assert.deepEqual(fake.errors, [`Cannot profile process 1: ${WHY}`]);

  // Nothing picked (Escape): nothing happens.
  fake.quickPick = undefined;
  assert.equal(await fake.commands.get('dapprof.profileProcess')!(), false);
  assert.equal(fake.errors.length, 1);
  // ${command:dapprof.pickProcess} in a launch.json gets the ID as a string.
  fake.quickPick = "19214  /usr/bin/python3 -c 'while True: pass'";
  assert.equal(await fake.commands.get('dapprof.pickProcess')!(), '19214');
});

test('Profile Process… reports a dapprof that cannot list the processes, and says when there is none', async () => {
  fake.config = { 'dapprof.path': fakeDapprof('dapprof-ps-fails', '', 'cannot read /proc') };
  assert.equal(await fake.commands.get('dapprof.profileProcess')!(), false);
  assert.match(fake.errors[0], /^Cannot list the Python processes: "dapprof ps --json" failed \(exit code 3\): cannot read \/proc$/);
  fake.config = { 'dapprof.path': join(dir, 'missing') };
  assert.equal(await fake.commands.get('dapprof.profileProcess')!(), false);
  assert.match(fake.errors[1], /dapprof was not found at ".*missing" \(setting dapprof\.path\)/);
  fake.config = { 'dapprof.path': fakeDapprof('dapprof-ps-empty', '{"processes":[]}') };
  assert.equal(await fake.commands.get('dapprof.profileProcess')!(), false);
  assert.deepEqual(fake.infos, ['dapprof found no running Python process.']);
  assert.equal(fake.quickPickItems.length, 0);
  assert.equal(fake.started.length, 0);
});

test('the dapprof-profile adapter is `dapprof stdio --profile-only`', async () => {
  const exe = fakeDapprof('dapprof-adapter', '{}');
  fake.config = { 'dapprof.path': exe };
  const factory = new ProfileOnlyAdapterFactory();
  for (const configuration of [{ request: 'launch', program: '/ws/a.py' }, { request: 'attach', processId: 5 }]) {
    const session = { ...makeSession('p', 'dapprof-profile'), configuration: { type: 'dapprof-profile', ...configuration } };
    const d = (await factory.createDebugAdapterDescriptor(session as never)) as unknown as { command: string; args: string[] };
    assert.deepEqual([d.command, d.args], [exe, ['stdio', '--profile-only']]);
  }
  assert.deepEqual(PROFILE_ONLY_ARGS, ['stdio', '--profile-only']);
  fake.config = { 'dapprof.path': join(dir, 'missing') };
  await assert.rejects(factory.createDebugAdapterDescriptor(makeSession('q', 'dapprof-profile') as never), /dapprof was not found at/);
});

test('dapprof-profile configurations: the interpreter of the settings, F5 profiles the current file; the arguments are left to the daemon', () => {
  const p = new ProfileOnlyConfigurationProvider();
  const folder = { uri: Uri.file('/ws'), name: 'ws', index: 0 } as never;
  // Checked by dapprof (its refusal names the attribute; tests/adapter/test_profile_only.py), not here.
  const odd = { type: 'dapprof-profile', request: 'launch', name: 'x', program: 'a.py', module: 'a', python: 'py' };
  assert.deepEqual(p.resolveDebugConfiguration(folder, odd), odd);
  // A launch without "python" gets the interpreter of the settings.
  fake.config = { 'python.defaultInterpreterPath': '/venv/bin/python' };
  assert.deepEqual(p.resolveDebugConfiguration(folder, { type: 'dapprof-profile', request: 'launch', name: 'm', module: 'pkg.main' }), {
    type: 'dapprof-profile',
    request: 'launch',
    name: 'm',
    module: 'pkg.main',
    python: '/venv/bin/python',
  });
  const attach = { type: 'dapprof-profile', request: 'attach', name: 'a', processId: '${command:dapprof.pickProcess}' };
  assert.equal(p.resolveDebugConfiguration(folder, attach), attach);

  // F5 without a launch.json: the current Python file, else a hint.
  fake.activeTextEditor = { document: { uri: Uri.file('/ws/src/job.py'), languageId: 'python' } };
  fake.config = {};
  assert.deepEqual(p.resolveDebugConfiguration(folder, { type: '', request: '', name: '' }), {
    type: 'dapprof-profile',
    request: 'launch',
    name: 'Profile job.py',
    program: '/ws/src/job.py',
    cwd: '/ws',
    python: 'python3',
  });
  fake.activeTextEditor = undefined;
  assert.equal(p.resolveDebugConfiguration(folder, { type: '', request: '', name: '' }), undefined);
  assert.match(fake.infos.at(-1)!, /Open a Python file to profile it/);
});

test('Profile Python File launches the file with the interpreter of the settings, saved first', async () => {
  const run = fake.commands.get('dapprof.profilePythonFile')!;
  let saved = 0;
  fake.activeTextEditor = { document: { uri: Uri.file('/ws/tools/busy.py'), languageId: 'python' } };
  fake.textDocuments = [{ uri: Uri.file('/ws/tools/busy.py'), isDirty: true, save: () => (saved++, Promise.resolve(true)) }];
  assert.equal(await run(), true);
  assert.equal(saved, 1, 'the edits are saved: the file on disk is what runs');
  assert.deepEqual(fake.started.at(-1)!.config, { type: 'dapprof-profile', request: 'launch', name: 'Profile busy.py', program: '/ws/tools/busy.py', cwd: '/ws', python: 'python3' });
  fake.config = { 'python.defaultInterpreterPath': '/venv/bin/python' };
  fake.textDocuments = [];
  // From the editor's title bar or the explorer: the file given, outside the workspace too.
  assert.equal(await run(Uri.file('/tmp/x/other.py')), true);
  assert.deepEqual(fake.started.at(-1)!.config, { type: 'dapprof-profile', request: 'launch', name: 'Profile other.py', program: '/tmp/x/other.py', cwd: '/tmp/x', python: '/venv/bin/python' });
  fake.config = { 'python.defaultInterpreterPath': '/venv/bin/python', 'dapprof.python': '/opt/py/bin/python3.13' };
  await run();
  assert.equal(fake.started.at(-1)!.config.python, '/opt/py/bin/python3.13', 'dapprof.python comes first');

  const before = fake.started.length;
  fake.activeTextEditor = { document: { uri: Uri.file('/ws/notes.md'), languageId: 'markdown' } };
  assert.equal(await run(), false);
  assert.match(fake.errors.at(-1)!, /Open a Python file to profile it/);
  assert.equal(await run(new Uri('untitled', 'Untitled-1')), false);
  assert.match(fake.errors.at(-1)!, /files on disk only/);
  assert.equal(fake.started.length, before);
});

test('a dapprof-profile configuration runs as a profile-only run, not a debug session: profiling starts, Stop ends the program, Restart runs it again', { skip }, async () => {
  const flag = join(dir, 'never.flag');
  fake.config = { 'dapprof.path': DAPPROF, 'dapprof.profiling.rate': 200, 'dapprof.profiling.openFlameGraph': false };
  const provider = fake.configProviders.get('dapprof-profile') as ProfileOnlyConfigurationProvider;
  const config = { type: 'dapprof-profile', request: 'launch', name: 'Profile busy.py', program: BUSY, args: [flag], cwd: dir, python: '/usr/bin/python3' };
  // Resolved, it starts no debug session (undefined): the extension runs dapprof itself.
  assert.equal(provider.resolveDebugConfigurationWithSubstitutedVariables!(undefined, config), undefined);
  await until('the run to profile', () => controller.shown?.status === 'profiling' && (controller.shown.stream?.totals.sampleCount ?? 0) > 10);
  const first = controller.shown!;
  assert.equal(first.run?.path, 'profile-only');
  assert.equal(first.run?.rate, 200);
  assert.equal(fake.panels.length, 1, 'the panel opens even with openFlameGraph off');
  // Its controls: Stop and Restart beside the sample count; no debug session, so no debug toolbar.
  const [, stop, restart] = fake.statusBars;
  assert.deepEqual([stop.visible, stop.command, restart.visible, restart.command], [true, 'dapprof.stopRun', true, 'dapprof.restartRun']);
  assert.match(stop.tooltip, /Stop "Profile busy.py": sampling and the program/);
  assert.equal(fake.started.length, 0);

  // Restart: the run is stopped (its program ended) and the configuration runs again.
  const pid = first.run!.pid!;
  assert.equal(await fake.commands.get('dapprof.restartRun')!(), true);
  assert.equal(first.stopped?.reason, 'stopProfiling');
  await until('the first program to end', () => !alive(pid));
  await until('the second run to profile', () => controller.shown !== first && controller.shown?.status === 'profiling');
  const second = controller.shown!;
  assert.notEqual(second.run?.pid, pid);

  // Stop: sampling and the program; the controls go.
  assert.equal(await fake.commands.get('dapprof.stopRun')!(), true);
  assert.equal(second.status, 'idle');
  await until('the second program to end', () => !alive(second.run!.pid!));
  await until('the controls to go', () => !stop.visible && !restart.visible);
  assert.deepEqual(fake.errors, []);
});

test('a profile-only run dapprof refuses (a process that is not Python) shows its reason, and runs nothing', { skip }, async () => {
  fake.config = { 'dapprof.path': DAPPROF };
  const provider = fake.configProviders.get('dapprof-profile') as ProfileOnlyConfigurationProvider;
  const sleeper = spawn('/bin/sleep', ['30'], { stdio: 'ignore' });
  try {
    provider.resolveDebugConfigurationWithSubstitutedVariables!(undefined, { type: 'dapprof-profile', request: 'attach', name: 'sleep', processId: String(sleeper.pid) });
    await until('the refusal', () => fake.errors.length > 0);
    assert.match(fake.errors[0], new RegExp(`^Could not start "sleep": .*${sleeper.pid}`));
    assert.equal(controller.sessions.size, 0);
    assert.equal(fake.statusBars[1].visible, false);
  } finally {
    sleeper.kill('SIGKILL');
  }
});

test('package.json declares the dapprof-profile type, its activation events and the commands\' menus', () => {
  const pkg = JSON.parse(readFileSync(join(clientRoot, 'package.json'), 'utf8'));
  for (const e of ['onDebugResolve:dapprof-profile', 'onCommand:dapprof.profileProcess', 'onCommand:dapprof.profilePythonFile']) assert.ok(pkg.activationEvents.includes(e), e);
  const type = pkg.contributes.debuggers.find((d: { type: string }) => d.type === 'dapprof-profile');
  assert.equal(type.label, 'Python: profile only (dapprof, no debugger)');
  assert.deepEqual(Object.keys(type.configurationAttributes.launch.properties).sort(), ['args', 'cwd', 'env', 'module', 'program', 'python']);
  assert.deepEqual(Object.keys(type.configurationAttributes.attach.properties), ['processId']);
  const titles = Object.fromEntries(pkg.contributes.commands.map((c: { command: string; title: string }) => [c.command, c.title]));
  assert.equal(titles['dapprof.profileProcess'], 'Profile Process…');
  assert.equal(titles['dapprof.profilePythonFile'], 'Profile Python File');
  assert.ok(pkg.contributes.menus['editor/title'].some((m: { command: string }) => m.command === 'dapprof.profilePythonFile'));
  assert.equal(pkg.contributes.configuration.properties['dapprof.python'].default, '');
});
