// The "asyncio Tasks" view of the Run and Debug container: the debuggee's pending asyncio tasks as
// the daemon's asyncTasks request answers them, read on demand (the command
// dapprof.showAsyncTasks, the view's refresh button), never polled: each read pauses the program
// for a moment. Errors are shown in the view, as the daemon words them.

import * as vscode from 'vscode';
import { TaskForest, TaskNode } from '../model/async-tasks';
import type { AsyncTasksResponseBody, TaskFrame } from '../model/protocol';
import { COMMANDS } from '../model/protocol';
import { errorMessage } from './session';
import { openSource } from './source';

export const VIEW_ID = 'dapprof.asyncTasks';
export const COMMAND_SHOW = 'dapprof.showAsyncTasks';
export const COMMAND_REFRESH = 'dapprof.refreshAsyncTasks';
export const COMMAND_OPEN_FRAME = 'dapprof.openAsyncTaskFrame';

export type TaskElement =
  | { kind: 'task'; node: TaskNode }
  | { kind: 'frame'; frame: TaskFrame }
  | { kind: 'message'; text: string; icon: 'error' | 'info' | 'warning' };

/** What the view shows: nothing read yet, a read under way, its tasks, or why there are none. */
type Shown =
  | { kind: 'none' }
  | { kind: 'reading'; session: vscode.DebugSession }
  | { kind: 'tasks'; session: vscode.DebugSession; forest: TaskForest; at: Date }
  | { kind: 'error'; session: vscode.DebugSession | undefined; message: string };

const NO_SESSION = 'Start debugging a Python program with dapprof, then run "dapprof: Show asyncio Tasks".';

/** The items of the view's top level besides the tasks: what the document says is not shown. */
export function notes(document: AsyncTasksResponseBody): TaskElement[] {
  const out: TaskElement[] = [];
  if (document.tasks.length === 0) out.push({ kind: 'message', text: 'No pending asyncio tasks.', icon: 'info' });
  if (document.torn > 0) out.push({ kind: 'message', text: `${document.torn} task(s) changed while read and are left out.`, icon: 'warning' });
  if (document.truncated) out.push({ kind: 'message', text: 'The read stopped at its limit: not every task is listed.', icon: 'warning' });
  for (const m of document.missing) out.push({ kind: 'message', text: m, icon: 'warning' });
  return out;
}

export class AsyncTasksView implements vscode.TreeDataProvider<TaskElement>, vscode.Disposable {
  private shown: Shown = { kind: 'none' };
  private readonly changed = new vscode.EventEmitter<TaskElement | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly view: vscode.TreeView<TaskElement>;
  private readonly disposables: vscode.Disposable[] = [];
  /** Counts reads, so that an answer overtaken by a later read is dropped. */
  private generation = 0;

  /** `activeSession`: the session the command reads, if it talks to dapprof (else undefined). */
  constructor(private readonly activeSession: () => vscode.DebugSession | undefined) {
    this.view = vscode.window.createTreeView(VIEW_ID, { treeDataProvider: this, showCollapseAll: true });
    this.disposables.push(
      this.view,
      this.changed,
      vscode.commands.registerCommand(COMMAND_SHOW, () => this.show()),
      vscode.commands.registerCommand(COMMAND_REFRESH, () => this.refresh()),
      vscode.commands.registerCommand(COMMAND_OPEN_FRAME, (file: string, line: number) => this.openFrame(file, line)),
      vscode.debug.onDidTerminateDebugSession((s) => {
        if ('session' in this.shown && this.shown.session?.id === s.id) this.set({ kind: 'none' });
      }),
    );
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }

  /** The command: reveals the view and reads the active session's tasks. */
  async show(): Promise<void> {
    const read = this.refresh();
    await vscode.commands.executeCommand(`${VIEW_ID}.focus`);
    await read;
  }

  /** Reads the tasks of the active session (or says why it cannot). */
  async refresh(): Promise<void> {
    const session = this.activeSession();
    const generation = ++this.generation;
    if (!session) {
      this.set({ kind: 'error', session: undefined, message: NO_SESSION });
      return;
    }
    this.set({ kind: 'reading', session });
    let next: Shown;
    try {
      const body = (await session.customRequest(COMMANDS.asyncTasks, {})) as AsyncTasksResponseBody;
      next = { kind: 'tasks', session, forest: new TaskForest(body), at: new Date() };
    } catch (e) {
      next = { kind: 'error', session, message: errorMessage(e) };
    }
    if (generation === this.generation) this.set(next);
  }

  private set(shown: Shown): void {
    this.shown = shown;
    this.view.message = this.heading();
    this.changed.fire(undefined);
  }

  private heading(): string | undefined {
    const s = this.shown;
    if (s.kind === 'reading') return `Reading the asyncio tasks of "${s.session.name}"…`;
    if (s.kind === 'tasks') {
      const d = s.forest.document;
      return `${d.tasks.length} task(s) of "${s.session.name}" (Python ${d.python_version}), read at ${s.at.toLocaleTimeString()}`;
    }
    return undefined;
  }

  private async openFrame(file: string, line: number): Promise<void> {
    const session = 'session' in this.shown ? this.shown.session : undefined;
    await openSource(session, file, line);
  }

  getChildren(element?: TaskElement): TaskElement[] {
    const s = this.shown;
    if (!element) {
      if (s.kind === 'error') return [{ kind: 'message', text: s.message, icon: 'error' }];
      if (s.kind !== 'tasks') return [];
      return [...notes(s.forest.document), ...s.forest.roots.map((node): TaskElement => ({ kind: 'task', node }))];
    }
    if (element.kind !== 'task' || s.kind !== 'tasks') return [];
    return [
      ...s.forest.frames(element.node).map((frame): TaskElement => ({ kind: 'frame', frame })),
      ...s.forest.children(element.node).map((node): TaskElement => ({ kind: 'task', node })),
    ];
  }

  getTreeItem(element: TaskElement): vscode.TreeItem {
    const forest = this.shown.kind === 'tasks' ? this.shown.forest : undefined;
    return treeItem(element, forest);
  }
}

/** How an element looks: a task by its name and state, a frame as pstree prints it. */
export function treeItem(element: TaskElement, forest: TaskForest | undefined): vscode.TreeItem {
  if (element.kind === 'message') {
    const item = new vscode.TreeItem(element.text, vscode.TreeItemCollapsibleState.None);
    item.tooltip = element.text;
    item.iconPath = new vscode.ThemeIcon(element.icon);
    return item;
  }
  if (element.kind === 'frame') {
    const f = element.frame;
    const item = new vscode.TreeItem(f.name, vscode.TreeItemCollapsibleState.None);
    item.description = `${f.file}:${f.line}`;
    item.tooltip = `${f.name} ${f.file}:${f.line}`;
    item.iconPath = new vscode.ThemeIcon('symbol-method');
    item.command = { command: COMMAND_OPEN_FRAME, title: 'Open Source', arguments: [f.file, f.line] };
    return item;
  }
  const { task, cycle } = element.node;
  const expandable = !cycle && (task.frames.length > 0 || (forest?.children(element.node).length ?? 0) > 0);
  // The roots of a small tree open, to show what they await; the rest opens on demand (a
  // thousand waiters would bury the others).
  const open = element.node.path.length === 1 && (forest?.size ?? 0) <= 50;
  const state = !expandable
    ? vscode.TreeItemCollapsibleState.None
    : open
      ? vscode.TreeItemCollapsibleState.Expanded
      : vscode.TreeItemCollapsibleState.Collapsed;
  const item = new vscode.TreeItem(task.name, state);
  item.description = cycle ? `${task.state} (awaits a task above it: a cycle)` : task.state;
  const awaiters = task.awaited_by.map((id) => {
    const by = forest?.task(id);
    return by ? `${by.name} (${id})` : id;
  });
  item.tooltip = [`id ${task.id}`, `thread ${task.thread}`, `awaited by ${awaiters.length ? awaiters.join(', ') : 'no task'}`].join('\n');
  item.iconPath = new vscode.ThemeIcon(task.state === 'running' ? 'debug-start' : 'watch');
  item.contextValue = 'dapprof.asyncTask';
  return item;
}
