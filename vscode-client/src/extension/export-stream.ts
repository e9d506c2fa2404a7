// Export of a run whose session has ended (or a kept run, after a reload): the daemon that ran it
// has gone with the session, so the run's stream (the kept file, or the extension's copy written
// to one) is given to `dapprof convert`, which writes any format from it as the daemon's
// exportProfile would. The extension still writes no profile format itself.

import { execFile } from 'child_process';
import * as fs from 'fs/promises';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import type { ProfilingDataBody, ProfilingSummary } from '../model/protocol';
import { EXPORT_FORMATS, exportFileName, type ExportFormat } from './export';
import { streamText } from './run-store';

export interface StreamExport {
  /** The dapprof that converts. */
  exe: string;
  /** The run's name, for the file's. */
  name: string;
  folder: vscode.Uri | undefined;
  /** The kept file of the run, if it has one; else `bodies` are written to a temporary one. */
  streamFile?: string;
  bodies: () => readonly ProfilingDataBody[];
  summary?: ProfilingSummary;
  format?: ExportFormat;
  hideDebugger: boolean;
}

/** `dapprof convert STREAM --format F --output FILE [--hide-debugger]`: resolves, or rejects with dapprof's message. */
export function convertStream(exe: string, stream: string, format: ExportFormat, output: string, hideDebugger: boolean): Promise<void> {
  // The command line calls collapsed stacks "raw", as py-spy does; the protocol's other names are its own.
  const cliFormat = format === 'collapsed' ? 'raw' : format;
  const args = ['convert', stream, '--format', cliFormat, '--output', output, ...(hideDebugger ? ['--hide-debugger'] : [])];
  return new Promise((resolve, reject) =>
    // No shell: dapprof and its arguments as they are.
    execFile(exe, args, { timeout: 120_000, maxBuffer: 4 * 1024 * 1024 }, (error, _stdout, stderr) => {
      if (!error) return resolve();
      const why = String(stderr).trim().split('\n')[0]?.replace(/^dapprof: error: /, '');
      reject(new Error(why || error.message));
    }),
  );
}

export async function exportStream(req: StreamExport): Promise<vscode.Uri | undefined> {
  let format = req.format;
  if (!format) {
    const pick = await vscode.window.showQuickPick(
      EXPORT_FORMATS.map((f) => ({ label: f.format, description: f.description })),
      { placeHolder: 'Export the profile as' },
    );
    if (!pick) return undefined;
    format = pick.label as ExportFormat;
  }
  // The format's usual file extension is the daemon's to know (it answers exportProfile with
  // it); without a daemon the format's name stands in, as the dialog lets the user rename.
  const name = exportFileName(req.name, format, format);
  const uri = await vscode.window.showSaveDialog({
    defaultUri: req.folder ? vscode.Uri.joinPath(req.folder, name) : undefined,
    saveLabel: 'Export Profile',
  });
  if (!uri) return undefined;
  let temp: string | undefined;
  try {
    let stream = req.streamFile;
    if (!stream) {
      temp = await fs.mkdtemp(path.join(os.tmpdir(), 'dapprof-export-'));
      stream = path.join(temp, 'run.jsonl');
      await fs.writeFile(stream, streamText(req.bodies(), req.summary));
    }
    await convertStream(req.exe, stream, format, uri.fsPath, req.hideDebugger);
  } catch (e) {
    void vscode.window.showErrorMessage(`Could not export the profile of "${req.name}": ${e instanceof Error ? e.message : String(e)}`);
    return undefined;
  } finally {
    if (temp) await fs.rm(temp, { recursive: true, force: true });
  }
  if (format === 'pprof') void vscode.window.showInformationMessage(`Exported the profile to ${uri.fsPath} (open it with go tool pprof or Pyroscope).`);
  else await vscode.commands.executeCommand('vscode.open', uri);
  return uri;
}
