// Export Profile…: the daemon writes the document (exportProfile request), the extension only
// asks for the format and the file and saves what it got. The daemon is the one writer of every
// profile format, for this extension and for `dapprof record` alike, and it keeps a finished run
// until the next start, so a run stays exportable while its debug session lasts.

import * as vscode from 'vscode';
import { PROFILE_FORMATS, type ExportProfileArguments, type ExportProfileResponseBody, type ProfileFormat } from '../model/protocol';
import { errorMessage } from './session';

export type ExportFormat = ProfileFormat;

/** What each format is for, as offered to pick; a format the schema adds fails to compile here. */
const FORMAT_DESCRIPTIONS: Record<ProfileFormat, string> = {
  speedscope: 'speedscope JSON — opens in speedscope.app',
  cpuprofile: "Chrome DevTools and VS Code's profile viewer",
  collapsed: 'folded stacks, one line each — flamegraph.pl and similar tools',
  flamegraph: 'an interactive SVG flame graph for any browser',
  chrometrace: "Chrome's trace viewer and Perfetto — samples on a timeline",
  pprof: 'gzipped profile.proto — go tool pprof, pprof and Grafana Pyroscope',
  gecko: 'Gecko profile JSON — opens in the Firefox Profiler (profiler.firefox.com)',
};

/** Every format of the protocol (the generated PROFILE_FORMATS, in the schema's order). */
export const EXPORT_FORMATS: ReadonlyArray<{ format: ExportFormat; description: string }> =
  PROFILE_FORMATS.map((format) => ({ format, description: FORMAT_DESCRIPTIONS[format] }));

export function isExportFormat(x: unknown): x is ExportFormat {
  return EXPORT_FORMATS.some((f) => f.format === x);
}

/** "app.speedscope.json", "app.cpuprofile": the format in the name when the extension does not say it. */
export function exportFileName(base: string, format: ExportFormat, extension: string): string {
  const safe = (base || 'profile').replace(/[^\w.-]+/g, '_');
  return extension === format ? `${safe}.${extension}` : `${safe}.${format}.${extension}`;
}

export interface ExportRequest {
  session: Pick<vscode.DebugSession, 'name' | 'workspaceFolder' | 'customRequest'>;
  /** A format from the caller (a command argument); asked for when absent. */
  format?: ExportFormat;
  /** The panel's "Hide debugger" choice now, so that the file holds what the panel shows. */
  hideDebugger: boolean;
  /** Whether VS Code already showed the error response of the request (showUser). */
  errorShown: () => boolean;
}

/** Asks for a format, has the daemon write the profile, saves it where the user says, opens it. */
export async function exportProfile(req: ExportRequest): Promise<vscode.Uri | undefined> {
  let format = req.format;
  if (!format) {
    const pick = await vscode.window.showQuickPick(
      EXPORT_FORMATS.map((f) => ({ label: f.format, description: f.description })),
      { placeHolder: 'Export the profile as' },
    );
    if (!pick) return undefined;
    format = pick.label as ExportFormat;
  }
  // Asked before the file is chosen: the daemon's refusal (no run yet) comes before the dialog,
  // and its extension names the file.
  const args: ExportProfileArguments = { format, hideDebugger: req.hideDebugger };
  let body: ExportProfileResponseBody;
  try {
    body = (await req.session.customRequest('exportProfile', args)) as ExportProfileResponseBody;
  } catch (e) {
    if (!req.errorShown()) void vscode.window.showErrorMessage(`Could not export the profile of "${req.session.name}": ${errorMessage(e)}`);
    return undefined;
  }
  if (!body || typeof body.content !== 'string') {
    void vscode.window.showErrorMessage(`Could not export the profile of "${req.session.name}": the debug adapter sent no document.`);
    return undefined;
  }
  const extension = /^[a-z]+(\.[a-z]+)*$/.test(body.fileExtension ?? '') ? body.fileExtension : format === 'cpuprofile' ? 'cpuprofile' : 'txt';
  // A binary document (pprof's gzip) comes base64-encoded, as a JSON string holds text only.
  const binary = body.contentEncoding === 'base64';
  const folder = req.session.workspaceFolder?.uri ?? vscode.workspace.workspaceFolders?.[0]?.uri;
  const name = exportFileName(req.session.name, format, extension);
  const uri = await vscode.window.showSaveDialog({
    defaultUri: folder ? vscode.Uri.joinPath(folder, name) : undefined,
    // The dialog's filter takes one extension: the last part of "pb.gz".
    filters: { [format]: [extension.split('.').pop() ?? extension] },
    saveLabel: 'Export Profile',
  });
  if (!uri) return undefined;
  try {
    await vscode.workspace.fs.writeFile(uri, binary ? Buffer.from(body.content, 'base64') : new TextEncoder().encode(body.content));
  } catch (e) {
    void vscode.window.showErrorMessage(`Could not write the profile to ${uri.fsPath}: ${errorMessage(e)}`);
    return undefined;
  }
  // VS Code has no viewer of a binary profile: it is saved, and said so, not opened.
  if (binary) void vscode.window.showInformationMessage(`Exported the profile to ${uri.fsPath} (open it with ${format === 'pprof' ? 'go tool pprof or Pyroscope' : 'its tool'}).`);
  else await vscode.commands.executeCommand('vscode.open', uri);
  return uri;
}
