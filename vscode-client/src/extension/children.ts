// Child processes: debugpy announces each with a debugpyAttach event, and the extension attaches
// to it through dapprof as well (the parent's dapprof serves the child's session), so that the
// child can be profiled on its own.

import * as vscode from 'vscode';

/** debugpy announced a child process: debug it through dapprof too, as a child session. */
export async function attachChild(parent: vscode.DebugSession, body: Record<string, unknown>): Promise<boolean> {
  if (parent.type !== 'dapprof' || !body || typeof body !== 'object') return false; // other types: their own extension attaches
  const config: vscode.DebugConfiguration = {
    ...body,
    type: 'dapprof',
    request: 'attach',
    name: typeof body.name === 'string' && body.name ? body.name : `Subprocess ${String(body.subProcessId ?? '')}`.trim(),
  };
  try {
    const ok = await vscode.debug.startDebugging(parent.workspaceFolder, config, { parentSession: parent, lifecycleManagedByParent: true });
    if (!ok) void vscode.window.showWarningMessage(`Could not attach to the child process "${config.name}".`);
    return ok;
  } catch (e) {
    void vscode.window.showWarningMessage(`Could not attach to the child process "${config.name}": ${e instanceof Error ? e.message : String(e)}`);
    return false;
  }
}
