// A profile file as the baseline of the differential flame graph ("Compare with a file…" in the
// panel): dapprof reads the file (`dapprof convert`, as for opening one) and the page gets its
// profilingData bodies, exactly what it keeps of an earlier run. The extension reads no profile
// format itself.

import * as path from 'path';
import * as vscode from 'vscode';
import type { ProfilingDataBody } from '../model/protocol';
import type { ToWebview } from '../webview/messages';
import { settingsDapprof } from './dapprof-path';
import { streamProfileFile } from './profile-file';

/** The profilingData bodies of a profile file, read by the dapprof `exe`; rejects with dapprof's reason. */
export async function readProfileBodies(exe: string, file: string): Promise<ProfilingDataBody[]> {
  const bodies: ProfilingDataBody[] = [];
  let error: string | undefined;
  await streamProfileFile(exe, file, {
    data: (body) => bodies.push(body),
    finished: () => undefined,
    failed: (message) => (error ??= message),
  });
  if (error !== undefined) throw new Error(error);
  return bodies;
}

/** Asks for a profile file and, once dapprof has read it, makes it the page's baseline. */
export async function pickBaselineFile(webview: vscode.Webview, extensionPath: string | undefined): Promise<void> {
  const picked = await vscode.window.showOpenDialog({
    canSelectMany: false,
    openLabel: 'Compare',
    title: 'Compare with a profile file',
    filters: { Profiles: ['json', 'cpuprofile', 'collapsed', 'txt'], 'All files': ['*'] },
  });
  const uri = picked?.[0];
  if (!uri) return;
  try {
    const bodies = await readProfileBodies(await settingsDapprof(extensionPath), uri.fsPath);
    const message: ToWebview = { type: 'baseline', label: path.basename(uri.fsPath), bodies };
    await webview.postMessage(message);
  } catch (e) {
    void vscode.window.showErrorMessage(`dapprof: cannot compare with ${path.basename(uri.fsPath)}: ${(e as Error).message}`);
  }
}
