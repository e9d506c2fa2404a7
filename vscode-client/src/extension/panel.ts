// The flame graph webview panel: one per window, showing one debug session's profile at a time.

import * as vscode from 'vscode';
import type { FromWebview, ToWebview } from '../webview/messages';
import { pickBaselineFile } from './baseline-file';

export function webviewHtml(webview: vscode.Webview, extensionUri: vscode.Uri, nonce: string): string {
  const script = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', 'webview.js'));
  const style = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'media', 'webview.css'));
  const csp = [
    "default-src 'none'",
    `style-src ${webview.cspSource}`,
    `script-src 'nonce-${nonce}'`,
    `img-src ${webview.cspSource} data:`,
    `font-src ${webview.cspSource}`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style}">
<title>Flame Graph</title>
</head>
<body>
<div id="app"></div>
<script nonce="${nonce}" src="${script}"></script>
</body>
</html>`;
}

export function makeNonce(): string {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let s = '';
  for (let i = 0; i < 32; i++) s += chars[Math.floor(Math.random() * chars.length)];
  return s;
}

export interface PanelHost {
  /** The webview loaded (or reloaded): send it the whole state. */
  onReady(): void;
  onOpenSource(file: string, line: number): void;
  /** The page's "Hide debugger" choice, on load and on each change. */
  onHideDebugger(hide: boolean): void;
  /** The page's thread filter, on each change (undefined: all threads). */
  onThread(thread: number | undefined): void;
  /** "Compare with…" in the page: the baseline to pick (by default a profile file). */
  onPickBaseline?(webview: vscode.Webview): void;
}

export class FlameGraphPanel {
  static readonly viewType = 'dapprof.flameGraph';
  private panel: vscode.WebviewPanel | undefined;
  private ready = false;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly host: PanelHost,
  ) {}

  get isOpen(): boolean {
    return this.panel !== undefined;
  }

  /** Open, and its page loaded: a message posted now arrives. */
  get isReady(): boolean {
    return this.panel !== undefined && this.ready;
  }

  /** Opens the panel, or reveals it. */
  show(preserveFocus = true): void {
    if (this.panel) {
      this.panel.reveal(undefined, preserveFocus);
      return;
    }
    const panel = vscode.window.createWebviewPanel(
      FlameGraphPanel.viewType,
      'Flame Graph',
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus },
      {
        enableScripts: true,
        retainContextWhenHidden: true,
        localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'dist'), vscode.Uri.joinPath(this.extensionUri, 'media')],
      },
    );
    this.panel = panel;
    this.ready = false;
    panel.webview.onDidReceiveMessage((m: FromWebview) => {
      if (m?.type === 'ready') {
        this.ready = true;
        if (typeof m.hideDebugger === 'boolean') this.host.onHideDebugger(m.hideDebugger);
        this.host.onReady();
      } else if (m?.type === 'hideDebugger' && typeof m.hideDebugger === 'boolean') {
        this.host.onHideDebugger(m.hideDebugger);
      } else if (m?.type === 'thread') {
        this.host.onThread(typeof m.thread === 'number' ? m.thread : undefined);
      } else if (m?.type === 'openSource' && typeof m.file === 'string') {
        this.host.onOpenSource(m.file, Number(m.line) || 0);
      } else if (m?.type === 'pickBaseline') {
        if (this.host.onPickBaseline) this.host.onPickBaseline(panel.webview);
        else void pickBaselineFile(panel.webview, this.extensionUri.fsPath);
      }
    });
    panel.onDidDispose(() => {
      this.panel = undefined;
      this.ready = false;
    });
    panel.webview.html = webviewHtml(panel.webview, this.extensionUri, makeNonce());
  }

  /** Sends a message if the panel is open. Before the page is ready the state is sent on 'ready'. */
  post(message: ToWebview): void {
    if (!this.panel || !this.ready) return;
    void this.panel.webview.postMessage(message);
  }

  dispose(): void {
    this.panel?.dispose();
  }
}
