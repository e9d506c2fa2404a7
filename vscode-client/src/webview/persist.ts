// The view choices kept in the webview's state (vscode.getState/setState), so that they survive
// the page being reloaded: grouping, table sort, "Hide debugger", "By task" and "Waiting tasks".

import type { GroupBy } from '../model/profile';
import type { TableSort } from './table';

export interface Persisted {
  groupBy: GroupBy;
  tableSort: TableSort;
  hideDebugger: boolean;
  byTask: boolean;
  /** Whether waiting asyncio tasks' samples are shown, when the run has them (async "all"). */
  waitingTasks: boolean;
}

export const DEFAULTS: Persisted = { groupBy: 'function', tableSort: 'self', hideDebugger: true, byTask: false, waitingTasks: true };

/** The stored choices, each checked (a state from an older page may lack or mistype one). */
export function loadPersisted(state: unknown): Persisted {
  const p = (state ?? {}) as Partial<Record<keyof Persisted, unknown>>;
  return {
    groupBy: p.groupBy === 'line' || p.groupBy === 'function' ? p.groupBy : DEFAULTS.groupBy,
    tableSort: p.tableSort === 'self' || p.tableSort === 'total' ? p.tableSort : DEFAULTS.tableSort,
    hideDebugger: typeof p.hideDebugger === 'boolean' ? p.hideDebugger : DEFAULTS.hideDebugger,
    byTask: typeof p.byTask === 'boolean' ? p.byTask : DEFAULTS.byTask,
    waitingTasks: typeof p.waitingTasks === 'boolean' ? p.waitingTasks : DEFAULTS.waitingTasks,
  };
}
