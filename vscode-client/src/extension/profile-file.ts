// Profile files (speedscope, .cpuprofile, collapsed stacks) opened in the flame graph: a
// read-only custom editor. dapprof reads the file (`dapprof convert FILE --format stream`) and
// writes the events a live run would have sent; the editor forwards them to the same page, so a
// file is shown, searched and explored exactly like a recorded run. The extension reads no
// profile format itself.

import { spawn } from 'child_process';
import * as path from 'path';
import * as vscode from 'vscode';
import type { ProfilingDataBody, ProfilingStoppedBody } from '../model/protocol';
import type { FromWebview, StoppedInfo, ToWebview } from '../webview/messages';
import { settingsDapprof } from './dapprof-path';
import { makeNonce, webviewHtml } from './panel';
import { RunStream } from './run-stream';
import { pickBaselineFile } from './baseline-file';
import { openSource } from './source';

/** One line of `dapprof convert --format stream`: a DAP event of the profiling extension. */
interface StreamEvent {
  type: 'event';
  event: string;
  body: unknown;
}

/** What reading one file gave so far, and where it goes. */
class FileView {
  /** A file's samples all stay: it is shown whole, unlike a run's replay. */
  private readonly stream = new RunStream(Number.POSITIVE_INFINITY);
  private stopped: StoppedInfo | undefined;
  private error: string | undefined;
  private ready = false;

  constructor(
    private readonly webview: vscode.Webview,
    private readonly title: string,
  ) {}

  onReady(): void {
    this.ready = true;
    this.post({ type: 'replay', run: { session: this.title }, ...this.stream.replay(), stopped: this.stopped, error: this.error });
  }

  data(body: ProfilingDataBody): void {
    this.stream.add(body);
    this.post({ type: 'data', body });
  }

  finished(stopped: ProfilingStoppedBody): void {
    this.stopped = { summary: stopped, reason: stopped.reason, message: stopped.message };
    this.post({ type: 'stopped', stopped: this.stopped });
  }

  failed(message: string): void {
    this.error = message;
    this.post({ type: 'error', message });
  }

  private post(message: ToWebview): void {
    if (this.ready) void this.webview.postMessage(message);
  }
}

/** dapprof's last error lines, without its "dapprof: error: " prefix. */
function errorText(stderr: string, code: number | null, signal: NodeJS.Signals | null): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim().replace(/^dapprof: error: /, ''))
    .filter((l) => l && !l.startsWith('dapprof>'));
  if (lines.length) return lines.slice(-3).join(' / ');
  return signal ? `dapprof was killed (${signal})` : `dapprof convert failed (exit code ${code})`;
}

/**
 * Runs `dapprof convert FILE --format stream` (no shell: the path is one argument) and feeds each
 * event to `view`; resolves when dapprof has exited. Killed when `token` is cancelled.
 */
export function streamProfileFile(exe: string, file: string, view: Pick<FileView, 'data' | 'finished' | 'failed'>, token?: { onCancel(f: () => void): void }): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn(exe, ['convert', file, '--format', 'stream'], { stdio: ['ignore', 'pipe', 'pipe'] });
    token?.onCancel(() => child.kill());
    let pending = '';
    let stderr = '';
    let finished = false;
    let broken: string | undefined;
    const line = (l: string) => {
      if (!l.trim() || broken) return;
      let e: StreamEvent;
      try {
        e = JSON.parse(l) as StreamEvent;
      } catch {
        broken = `dapprof wrote a line that is not JSON: ${l.slice(0, 120)}`;
        return;
      }
      if (e.event === 'profilingData') view.data(e.body as ProfilingDataBody);
      else if (e.event === 'profilingStopped') {
        finished = true;
        view.finished(e.body as ProfilingStoppedBody);
      }
    };
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      lines.forEach(line);
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-8192)));
    child.on('error', (e) => {
      view.failed(`dapprof could not be started (${exe}): ${e.message}`);
      resolve();
    });
    child.on('close', (code, signal) => {
      line(pending);
      if (broken) view.failed(broken);
      else if (code !== 0 || !finished) view.failed(errorText(stderr, code, signal));
      resolve();
    });
  });
}

export class ProfileFileEditorProvider implements vscode.CustomReadonlyEditorProvider {
  /**
   * The editor of the files that are profiles by their name (the default editor of
   * *.speedscope.json and *.collapsed), and the same editor offered by "Reopen Editor With…" for
   * names other programs also use (*.cpuprofile, which VS Code's own viewer opens; *.txt, *.json).
   * Two view types since package.json gives a priority per view type.
   */
  static readonly viewTypes = ['dapprof.profileFile', 'dapprof.profileFileOption'] as const;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly extensionPath: string | undefined,
  ) {}

  openCustomDocument(uri: vscode.Uri): vscode.CustomDocument {
    return { uri, dispose() {} };
  }

  async resolveCustomEditor(document: vscode.CustomDocument, panel: vscode.WebviewPanel, token: vscode.CancellationToken): Promise<void> {
    const uri = document.uri;
    panel.webview.options = {
      enableScripts: true,
      localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'dist'), vscode.Uri.joinPath(this.extensionUri, 'media')],
    };
    const view = new FileView(panel.webview, path.basename(uri.fsPath || uri.path));
    panel.webview.onDidReceiveMessage((m: FromWebview) => {
      if (m?.type === 'ready') view.onReady();
      else if (m?.type === 'openSource' && typeof m.file === 'string') void openSource(undefined, m.file, Number(m.line) || 0);
      else if (m?.type === 'pickBaseline') void pickBaselineFile(panel.webview, this.extensionPath);
    });
    panel.webview.html = webviewHtml(panel.webview, this.extensionUri, makeNonce());
    if (uri.scheme !== 'file') {
      view.failed(`Only files on this machine's disk can be opened (this one is ${uri.scheme}:).`);
      return;
    }
    let exe: string;
    try {
      exe = await settingsDapprof(this.extensionPath);
    } catch (e) {
      view.failed((e as Error).message);
      return;
    }
    let disposed = false;
    const cancellers: Array<() => void> = [];
    panel.onDidDispose(() => ((disposed = true), cancellers.forEach((c) => c())));
    token.onCancellationRequested(() => cancellers.forEach((c) => c()));
    if (!disposed) void streamProfileFile(exe, uri.fsPath, view, { onCancel: (f) => cancellers.push(f) });
  }
}

export function registerProfileFileEditors(extensionUri: vscode.Uri): vscode.Disposable[] {
  const provider = new ProfileFileEditorProvider(extensionUri, extensionUri.fsPath);
  return ProfileFileEditorProvider.viewTypes.map((viewType) =>
    vscode.window.registerCustomEditorProvider(viewType, provider, { webviewOptions: { retainContextWhenHidden: true }, supportsMultipleEditorsPerDocument: true }),
  );
}
