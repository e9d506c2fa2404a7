// What the extension learns from a debug adapter's own messages, which a tracker sees before
// VS Code handles them: whether the adapter profiles (its initialize response announces
// supportsProfiling, and supportsProfilingStacks), and whether VS Code is about to show the user
// a profiling request's error (showUser), so that the extension does not show it a second time
// when the request's promise rejects.

import * as vscode from 'vscode';
import type { ProfilingCommand } from './session';

interface AdapterMessage {
  type?: string;
  command?: string;
  success?: boolean;
  body?: { supportsProfiling?: boolean; supportsProfilingStacks?: boolean; error?: { showUser?: boolean } };
}

const PROFILING_COMMANDS: readonly string[] = ['startProfiling', 'stopProfiling', 'exportProfile'] satisfies ProfilingCommand[];

export interface AdapterEvents {
  supportsProfiling(session: vscode.DebugSession, stacks: boolean): void;
  errorShown(session: vscode.DebugSession, command: ProfilingCommand): void;
}

/** Tracks the adapters of every debug type. */
export function trackAdapters(on: AdapterEvents): vscode.Disposable {
  return vscode.debug.registerDebugAdapterTrackerFactory('*', {
    createDebugAdapterTracker: (session) => ({
      onDidSendMessage: (m: AdapterMessage) => {
        if (m?.type !== 'response') return;
        if (m.command === 'initialize' && m.success && m.body?.supportsProfiling === true) on.supportsProfiling(session, m.body.supportsProfilingStacks === true);
        else if (m.command && PROFILING_COMMANDS.includes(m.command) && m.success === false && m.body?.error?.showUser === true) on.errorShown(session, m.command as ProfilingCommand);
      },
    }),
  });
}
