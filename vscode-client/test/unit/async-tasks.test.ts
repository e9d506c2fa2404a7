// The asyncio Tasks view (src/extension/async-tasks.ts, src/model/async-tasks.ts) with the VS Code
// API stubbed: the tree built from an asyncTasks answer (one the daemon gave for
// tests/fixtures/asyncio_tasks.py's taskgroup scenario under CPython 3.14, and small documents for
// what a program rarely shows: shared awaiters, cycles, awaiters that are not tasks), the command
// that reads and reveals, the refresh, click-to-source, and errors shown as the daemon words them.
import { fake, FakeTreeView, makeSession, resetFake, settle, startSession, TreeItem, TreeItemCollapsibleState, Uri } from '../support/fake-vscode';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, test } from 'node:test';
import { COMMAND_OPEN_FRAME, COMMAND_REFRESH, COMMAND_SHOW, TaskElement, VIEW_ID } from '../../src/extension/async-tasks';
import { activate } from '../../src/extension/extension';
import { CONTEXT_ASYNC_TASKS } from '../../src/extension/status';
import { TaskForest, TaskNode } from '../../src/model/async-tasks';
import type { AsyncTask, AsyncTasksResponseBody } from '../../src/model/protocol';
import { clientRoot } from '../support/reference';

/**
 * The task document of the taskgroup scenario under CPython 3.14, as `dapprof dump --async --json`
 * printed it (the daemon's asyncTasks answer is the same document, from the same renderer); the
 * repository's path in it replaced by /src/dapprof.
 */
const TASKGROUP = JSON.parse(readFileSync(join(clientRoot, 'test/fixtures/async-tasks-taskgroup.json'), 'utf8')) as AsyncTasksResponseBody;

function task(id: string, name: string, awaited_by: string[] = [], frames: AsyncTask['frames'] = []): AsyncTask {
  return { id, name, state: 'waiting', thread: 7, awaited_by, frames };
}

function doc(tasks: AsyncTask[], extra: Partial<AsyncTasksResponseBody> = {}): AsyncTasksResponseBody {
  return { python_version: '3.14.0', tasks, torn: 0, truncated: false, missing: [], ...extra };
}

/** The tree as nested names: a task is [name, [frames..., children...]], a frame "name file:line". */
function outline(forest: TaskForest, nodes: TaskNode[] = forest.roots): unknown[] {
  return nodes.map((n) => [
    n.task.name + (n.cycle ? ' (cycle)' : ''),
    [...forest.frames(n).map((f) => `${f.name} ${f.file.split('/').pop()}:${f.line}`), ...outline(forest, forest.children(n))],
  ]);
}

test("the daemon's taskgroup answer becomes pstree's tree: roots at top, frames outermost first, then the awaited tasks", () => {
  const forest = new TaskForest(TASKGROUP);
  assert.deepEqual(
    forest.roots.map((r) => r.task.name),
    ['Task-1'],
  );
  const [main] = forest.roots;
  const under = forest.children(main).map((n) => n.task.name);
  assert.deepEqual([...under].sort(), ['cpu', 'handler-0', 'handler-1', 'handler-2']);
  // Outermost first: the program's main coroutine, then where it waits in the TaskGroup.
  assert.equal(forest.frames(main)[0].name, 'taskgroup');
  assert.deepEqual(forest.frames(main), [...TASKGROUP.tasks.find((t) => t.name === 'Task-1')!.frames].reverse());
  for (const handler of forest.children(main).filter((n) => n.task.name.startsWith('handler-'))) {
    const h = handler.task.name.slice('handler-'.length);
    assert.deepEqual(
      forest.children(handler).map((n) => n.task.name),
      [`fetch-${h}-0`, `fetch-${h}-1`].filter((name) => forest.children(handler).some((c) => c.task.name === name)),
    );
    assert.equal(forest.children(handler).length, 2);
    for (const fetch of forest.children(handler)) {
      assert.deepEqual(
        forest.frames(fetch).map((f) => f.name),
        ['fetch', 'leaf_wait', 'Event.wait'],
      );
      assert.deepEqual(forest.children(fetch), []);
    }
  }
  // Every task of the document is somewhere in the tree.
  const seen = new Set<string>();
  const walk = (nodes: TaskNode[]) => nodes.forEach((n) => (seen.add(n.task.id), walk(forest.children(n))));
  walk(forest.roots);
  assert.deepEqual([...seen].sort(), TASKGROUP.tasks.map((t) => t.id).sort());
});

test('a task awaited by several shows under each; awaiters that are not listed tasks leave it a root; a cycle is shown once and not expanded again', () => {
  const f = (line: number) => [{ name: 'leaf', file: '/app/x.py', line }, { name: 'outer', file: '/app/x.py', line: line + 10 }];
  const shared = new TaskForest(
    doc([task('0x1', 'main'), task('0x2', 'a', ['0x1']), task('0x3', 'b', ['0x1']), task('0x4', 'shared', ['0x2', '0x3', '0x3'], f(3)), task('0x5', 'by-a-future', ['0xdead'])]),
  );
  assert.deepEqual(outline(shared), [
    ['main', [['a', [['shared', ['outer x.py:13', 'leaf x.py:3']]]], ['b', [['shared', ['outer x.py:13', 'leaf x.py:3']]]]]],
    ['by-a-future', []],
  ]);

  const cycle = new TaskForest(doc([task('0xa', 'first', ['0xb']), task('0xb', 'second', ['0xa']), task('0xc', 'alone')]));
  assert.deepEqual(outline(cycle), [
    ['alone', []],
    ['first', [['second', [['first (cycle)', []]]]]],
  ]);
});

// ---- the view -----------------------------------------------------------------------------

let subscriptions: Array<{ dispose(): void }> = [];
beforeEach(() => {
  for (const d of subscriptions) d.dispose();
  resetFake();
  const ctx = { subscriptions: [] as Array<{ dispose(): void }>, extensionUri: Uri.file('/ext') };
  activate(ctx as never);
  subscriptions = ctx.subscriptions;
});

function view(): FakeTreeView {
  const v = fake.treeViews.get(VIEW_ID);
  assert.ok(v, 'the view was not created');
  return v;
}

function items(parent?: unknown): Array<TreeItem & { element: TaskElement }> {
  const v = view();
  return (v.provider.getChildren(parent) as TaskElement[]).map((e) => Object.assign(v.provider.getTreeItem(e), { element: e }));
}

async function run(command: string): Promise<void> {
  await fake.commands.get(command)!();
  await settle();
}

test('the view is offered only while the active session talks to dapprof', () => {
  const plain = makeSession('plain', 'debugpy');
  startSession(plain, false);
  assert.equal(fake.contexts.get(CONTEXT_ASYNC_TASKS), false);
  const s = makeSession('s1');
  startSession(s, true);
  assert.equal(fake.contexts.get(CONTEXT_ASYNC_TASKS), true);
});

test('the command asks the active session for its tasks, reveals the view and shows the tree; frames open their source', async () => {
  const s = makeSession('s1', 'dapprof', 'app');
  s.answer = (command) => {
    if (command === 'asyncTasks') return TASKGROUP;
    throw new Error(`unexpected ${command}`);
  };
  startSession(s, true);
  await run(COMMAND_SHOW);
  assert.deepEqual(s.requests, [['asyncTasks', {}]]);
  assert.ok(fake.executed.some(([id]) => id === `${VIEW_ID}.focus`));
  assert.match(view().message ?? '', new RegExp(`^${TASKGROUP.tasks.length} task\\(s\\) of "app" \\(Python 3\\.14\\.\\d+\\), read at `));

  const [root] = items();
  assert.equal(root.label, 'Task-1');
  assert.equal(root.description, 'waiting');
  assert.equal(root.collapsibleState, TreeItemCollapsibleState.Expanded);
  const main = TASKGROUP.tasks.find((t) => t.name === 'Task-1')!;
  assert.equal(root.tooltip, `id ${main.id}\nthread ${main.thread}\nawaited by no task`);

  const under = items(root.element);
  const frames = under.filter((i) => i.element.kind === 'frame');
  assert.deepEqual(
    frames.map((i) => `${i.label} ${i.description}`),
    [...main.frames].reverse().map((f) => `${f.name} ${f.file}:${f.line}`),
  );
  // Frames come first, then the awaited tasks.
  assert.equal(under.findIndex((i) => i.element.kind === 'task'), frames.length);
  const handler = under.find((i) => i.label === 'handler-0')!;
  assert.equal(handler.tooltip, `id ${TASKGROUP.tasks.find((t) => t.name === 'handler-0')!.id}\nthread ${main.thread}\nawaited by Task-1 (${main.id})`);
  const fetch = items(handler.element).find((i) => i.label === 'fetch-0-0')!;
  const leaf = items(fetch.element).at(-1)!;
  assert.equal(leaf.label, 'Event.wait');
  assert.equal(leaf.collapsibleState, TreeItemCollapsibleState.None);

  // Click-to-source: the frame's command opens its file at its line.
  const [file, line] = leaf.command!.arguments as [string, number];
  assert.equal(leaf.command!.command, COMMAND_OPEN_FRAME);
  fake.existing.add(file);
  await fake.commands.get(COMMAND_OPEN_FRAME)!(file, line);
  assert.equal(fake.shownDocuments.at(-1)!.uri.fsPath, file);
  assert.equal(fake.shownDocuments.at(-1)!.options.selection!.start.line, line - 1);

  // Refresh reads again: on demand only.
  await run(COMMAND_REFRESH);
  assert.equal(s.requests.length, 2);
});

test("errors are shown in the view in the daemon's words, and what the document says it left out too", async () => {
  const s = makeSession('s1');
  const message = 'dapprof reads the asyncio tasks of CPython 3.14 and newer, which publish where they keep them; process 42 runs Python 3.12.8';
  s.answer = () => {
    throw new Error(message);
  };
  startSession(s, true);
  await run(COMMAND_SHOW);
  assert.deepEqual(
    items().map((i) => [i.label, (i.iconPath as { id: string }).id]),
    [[message, 'error']],
  );
  assert.equal(fake.errors.length, 0, 'VS Code shows the error itself; the view does not repeat it');

  s.answer = () => doc([task('0x1', 'only')], { torn: 2, truncated: true, missing: ['this version does not say which task runs'] });
  await run(COMMAND_REFRESH);
  assert.deepEqual(
    items().map((i) => i.label),
    ['2 task(s) changed while read and are left out.', 'The read stopped at its limit: not every task is listed.', 'this version does not say which task runs', 'only'],
  );
  s.answer = () => doc([]);
  await run(COMMAND_REFRESH);
  assert.deepEqual(
    items().map((i) => i.label),
    ['No pending asyncio tasks.'],
  );

  // Without a dapprof session the view says what to do; a session's end clears its tasks.
  fake.onTerminate.fire(s);
  assert.deepEqual(items(), []);
  fake.activeDebugSession = undefined;
  await run(COMMAND_SHOW);
  assert.match(String(items()[0].label), /^Start debugging a Python program with dapprof/);
});

test('an answer overtaken by a later read is dropped', async () => {
  const s = makeSession('s1');
  const answers: Array<(v: unknown) => void> = [];
  s.customRequest = (command) => (s.requests.push([command, {}]), new Promise((r) => answers.push(r)));
  startSession(s, true);
  const first = fake.commands.get(COMMAND_REFRESH)!() as Promise<void>;
  const second = fake.commands.get(COMMAND_REFRESH)!() as Promise<void>;
  answers[1](doc([task('0x2', 'newer')]));
  await second;
  answers[0](doc([task('0x1', 'older')]));
  await first;
  assert.deepEqual(
    items().map((i) => i.label),
    ['newer'],
  );
});
