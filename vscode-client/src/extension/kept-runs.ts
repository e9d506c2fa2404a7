// Runs that outlive their session: every finished run is kept (run-store.ts), and stays
// exportable in every format (export-stream.ts) and comparable; after a window reload the kept
// runs are listed by *dapprof: Open a Kept Run…*, which shows one in the panel, and offered as
// baselines by the panel's *Compare with…* (beside a profile file).

import * as vscode from 'vscode';
import type { ProfilingDataBody } from '../model/protocol';
import type { ToWebview } from '../webview/messages';
import { pickBaselineFile } from './baseline-file';
import type { ExportFormat } from './export';
import { exportStream } from './export-stream';
import { type KeptRun, keptRunDetail, keptRunLabel, RunStore } from './run-store';
import { RunStream } from './run-stream';
import { errorMessage, newSessionProfile, type ProfiledSession, type SessionProfile } from './session';

export const OPEN_KEPT_RUN = 'dapprof.openKeptRun';

type KeptPick = vscode.QuickPickItem & { kept?: KeptRun };

/** Asks for a kept run; undefined when there is none or nothing was picked. */
export async function pickKeptRun(store: RunStore, placeHolder: string, extra: KeptPick[] = []): Promise<KeptPick | undefined> {
  const kept = await store.list();
  if (kept.length === 0 && extra.length === 0) {
    void vscode.window.showInformationMessage('dapprof keeps no run yet: a run is kept once it has stopped.');
    return undefined;
  }
  const items: KeptPick[] = [...kept.map((k) => ({ label: keptRunLabel(k), description: k.run.path ? `(${k.run.path})` : undefined, detail: keptRunDetail(k), kept: k })), ...extra];
  return vscode.window.showQuickPick(items, { placeHolder, matchOnDetail: true });
}

/**
 * The panel's "Compare with…": a kept run (its bodies become the baseline, as an earlier run of
 * the panel's would) or a profile file (read by dapprof).
 */
export async function pickBaseline(store: RunStore, webview: vscode.Webview, extensionPath: string | undefined): Promise<void> {
  const FILE = 'A profile file…';
  const picked = await pickKeptRun(store, 'Compare with a kept run, or a profile file', [{ label: FILE, description: 'speedscope, cpuprofile, collapsed' }]);
  if (!picked) return;
  if (!picked.kept) return pickBaselineFile(webview, extensionPath);
  let bodies: ProfilingDataBody[];
  try {
    bodies = await store.bodies(picked.kept.id);
  } catch (e) {
    void vscode.window.showErrorMessage(`dapprof: cannot read the kept run "${picked.label}": ${e instanceof Error ? e.message : String(e)}`);
    return;
  }
  const message: ToWebview = { type: 'baseline', label: picked.label, bodies };
  await webview.postMessage(message);
}

/** A kept run picked by the user, as an ended session's profile the panel can show; undefined if none was. */
export async function openKeptRun(store: RunStore): Promise<SessionProfile | undefined> {
  const k = (await pickKeptRun(store, 'Open a kept run in the flame graph'))?.kept;
  if (!k) return undefined;
  const stream = new RunStream();
  try {
    for (const body of await store.bodies(k.id)) stream.add(body);
  } catch (e) {
    void vscode.window.showErrorMessage(`dapprof: cannot read the kept run "${k.run.session}": ${errorMessage(e)}`);
    return undefined;
  }
  const session: ProfiledSession = {
    id: k.id,
    type: 'dapprof-kept',
    name: k.run.session,
    workspaceFolder: vscode.workspace.workspaceFolders?.[0],
    configuration: { type: 'dapprof-kept', request: 'launch', name: k.run.session },
    customRequest: () => Promise.reject(new Error('a kept run has no session')),
  };
  return { ...newSessionProfile(session), ended: true, run: k.run, stream, stopped: { summary: k.summary }, keptId: k.id };
}

/** Export of a run whose session has ended: `dapprof convert` of its kept stream (or of the extension's copy). */
export async function exportEnded(
  target: SessionProfile,
  dapprof: (folder: vscode.WorkspaceFolder | undefined) => Promise<string>,
  store: RunStore,
  format: ExportFormat | undefined,
  hideDebugger: boolean,
): Promise<vscode.Uri | undefined> {
  let exe: string;
  try {
    exe = await dapprof(target.session.workspaceFolder);
  } catch (e) {
    void vscode.window.showErrorMessage(`Could not export the profile of "${target.session.name}": ${errorMessage(e)}`);
    return undefined;
  }
  return exportStream({
    exe,
    name: target.session.name,
    folder: target.session.workspaceFolder?.uri ?? vscode.workspace.workspaceFolders?.[0]?.uri,
    streamFile: target.keptId ? store.file(target.keptId) : undefined,
    bodies: () => target.stream?.replay().bodies ?? [],
    summary: target.stopped?.summary,
    format,
    hideDebugger,
  });
}
