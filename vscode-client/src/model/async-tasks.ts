// The asyncio task tree of an asyncTasks answer, as `python -m asyncio pstree` draws it: the tasks
// no listed task awaits are the roots; under a task come its coroutine frames, outermost first,
// then the tasks it awaits (those whose awaited_by holds its id). Only the ids are read here: what
// a task is, its state and its frames are the daemon's, shown as they come.

import type { AsyncTask, AsyncTasksResponseBody, TaskFrame } from './protocol';

export interface TaskNode {
  task: AsyncTask;
  /** The ids from the root down to this task, itself included. */
  path: readonly string[];
  /**
   * The task is already on the path above it (tasks awaiting each other in a cycle): it is shown,
   * but not expanded again.
   */
  cycle: boolean;
}

export class TaskForest {
  private readonly byId = new Map<string, AsyncTask>();
  private readonly awaitedBy = new Map<string, AsyncTask[]>();
  readonly roots: TaskNode[];

  constructor(readonly document: AsyncTasksResponseBody) {
    for (const t of document.tasks) this.byId.set(t.id, t);
    for (const t of document.tasks) {
      // A task awaited twice by one awaiter is one child.
      for (const by of new Set(t.awaited_by)) {
        if (!this.byId.has(by)) continue;
        let list = this.awaitedBy.get(by);
        if (!list) this.awaitedBy.set(by, (list = []));
        list.push(t);
      }
    }
    const isRoot = (t: AsyncTask) => !t.awaited_by.some((by) => this.byId.has(by));
    const roots = document.tasks.filter(isRoot);
    // Tasks awaiting each other in a cycle are under no root: each such group is shown from its
    // first task in the document, so that no task is left out.
    const reached = new Set<string>();
    const reach = (t: AsyncTask) => {
      const stack = [t];
      while (stack.length) {
        const u = stack.pop()!;
        if (reached.has(u.id)) continue;
        reached.add(u.id);
        stack.push(...(this.awaitedBy.get(u.id) ?? []));
      }
    };
    roots.forEach(reach);
    for (const t of document.tasks) {
      if (reached.has(t.id)) continue;
      roots.push(t);
      reach(t);
    }
    this.roots = roots.map((task) => ({ task, path: [task.id], cycle: false }));
  }

  get size(): number {
    return this.byId.size;
  }

  task(id: string): AsyncTask | undefined {
    return this.byId.get(id);
  }

  /** The task's coroutine frames, outermost first (the daemon lists them innermost first). */
  frames(node: TaskNode): TaskFrame[] {
    return node.cycle ? [] : [...node.task.frames].reverse();
  }

  /** The tasks `node` awaits, in the document's order. */
  children(node: TaskNode): TaskNode[] {
    if (node.cycle) return [];
    return (this.awaitedBy.get(node.task.id) ?? []).map((task) => ({
      task,
      path: [...node.path, task.id],
      cycle: node.path.includes(task.id),
    }));
  }
}
