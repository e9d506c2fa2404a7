// Opening a frame's source from the flame graph: the daemon reports paths as the interpreter
// knows them, which may be relative to the program's working directory.

import * as path from 'path';
import * as vscode from 'vscode';

/** Opens `file` at `line`, trying it against the session's cwd and the workspace folders. */
export async function openSource(session: Pick<vscode.DebugSession, 'configuration' | 'workspaceFolder'> | undefined, file: string, line: number): Promise<void> {
  const candidates: string[] = [];
  if (path.isAbsolute(file)) candidates.push(file);
  else {
    const cwd = sessionCwd(session);
    if (cwd) candidates.push(path.resolve(cwd, file));
    for (const f of vscode.workspace.workspaceFolders ?? []) candidates.push(path.join(f.uri.fsPath, file));
  }
  for (const c of candidates) {
    const uri = vscode.Uri.file(c);
    try {
      await vscode.workspace.fs.stat(uri);
    } catch {
      continue;
    }
    const pos = new vscode.Position(Math.max(0, line - 1), 0);
    await vscode.window.showTextDocument(uri, { viewColumn: vscode.ViewColumn.One, selection: new vscode.Range(pos, pos), preview: true });
    return;
  }
  void vscode.window.showWarningMessage(`Cannot open ${file}: the file was not found${candidates.length ? '' : ' (a relative path, and no workspace folder is open)'}.`);
}

/** The working directory a session's configuration gives its program, if any. */
export function sessionCwd(session: Pick<vscode.DebugSession, 'configuration' | 'workspaceFolder'> | undefined): string | undefined {
  const cwd = session?.configuration?.cwd;
  return typeof cwd === 'string' && cwd ? cwd.replace('${workspaceFolder}', session?.workspaceFolder?.uri.fsPath ?? '') : undefined;
}
