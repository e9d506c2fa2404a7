// The dapprof that the settings name for a workspace folder (dapprof.path, else the bundled one,
// else PATH: executable.ts), checked to run before anything is asked of it.

import * as vscode from 'vscode';
import { checkDapprof, locateDapprof } from './executable';

/** The checked dapprof for `folder`; throws an Error that says what is wrong and what to do. */
export async function settingsDapprof(extensionPath: string | undefined, folder?: vscode.WorkspaceFolder): Promise<string> {
  const located = locateDapprof(vscode.workspace.getConfiguration('dapprof', folder).get<string>('path', ''), extensionPath);
  await checkDapprof(located);
  return located.exe;
}
