// Serves the webview bundle from localhost in a page that stands in for VS Code's webview host
// (a fake acquireVsCodeApi that records posted messages), and drives it in Debian's headless
// Chromium with playwright-core. No browser is downloaded: CHROMIUM or /usr/bin/chromium is used.

import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './chromium';
import { clientRoot } from './reference';

export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
export const screenshotDir = join(clientRoot, 'build', 'screenshots');

/** Variables VS Code sets for its default themes (a subset), so the page looks as it does there. */
const THEMES: Record<string, { bodyClass: string; vars: Record<string, string> }> = {
  light: {
    bodyClass: 'vscode-light',
    vars: {
      '--vscode-editor-background': '#ffffff',
      '--vscode-editor-foreground': '#3b3b3b',
      '--vscode-descriptionForeground': '#3b3b3b',
      '--vscode-panel-border': '#e5e5e5',
      '--vscode-input-background': '#ffffff',
      '--vscode-input-foreground': '#3b3b3b',
      '--vscode-input-border': '#cecece',
      '--vscode-focusBorder': '#005fb8',
      '--vscode-textLink-foreground': '#005fb8',
      '--vscode-charts-purple': '#652d90',
      '--vscode-charts-green': '#388a34',
      '--vscode-font-family': 'sans-serif',
      '--vscode-font-size': '13px',
      '--vscode-editor-font-size': '12px',
    },
  },
  dark: {
    bodyClass: 'vscode-dark',
    vars: {
      '--vscode-editor-background': '#1f1f1f',
      '--vscode-editor-foreground': '#cccccc',
      '--vscode-descriptionForeground': '#9d9d9d',
      '--vscode-panel-border': '#2b2b2b',
      '--vscode-input-background': '#313131',
      '--vscode-input-foreground': '#cccccc',
      '--vscode-input-border': '#3c3c3c',
      '--vscode-focusBorder': '#0078d4',
      '--vscode-textLink-foreground': '#4daafc',
      '--vscode-charts-purple': '#b180d7',
      '--vscode-charts-green': '#89d185',
      '--vscode-editorHoverWidget-background': '#202020',
      '--vscode-editorHoverWidget-foreground': '#cccccc',
      '--vscode-button-secondaryBackground': '#313131',
      '--vscode-button-secondaryForeground': '#cccccc',
      '--vscode-list-hoverBackground': '#2a2d2e',
      '--vscode-font-family': 'sans-serif',
      '--vscode-font-size': '13px',
      '--vscode-editor-font-size': '12px',
    },
  },
  // VS Code's "Dark High Contrast": black, white text, bright borders and an orange focus border.
  'high-contrast': {
    bodyClass: 'vscode-high-contrast',
    vars: {
      '--vscode-editor-background': '#000000',
      '--vscode-editor-foreground': '#ffffff',
      '--vscode-descriptionForeground': '#ffffff',
      '--vscode-panel-border': '#6fc3df',
      '--vscode-contrastBorder': '#6fc3df',
      '--vscode-input-background': '#000000',
      '--vscode-input-foreground': '#ffffff',
      '--vscode-input-border': '#6fc3df',
      '--vscode-focusBorder': '#f38518',
      '--vscode-textLink-foreground': '#21a6ff',
      '--vscode-charts-purple': '#b180d7',
      '--vscode-charts-green': '#89d185',
      '--vscode-editorHoverWidget-background': '#0c141f',
      '--vscode-editorHoverWidget-foreground': '#ffffff',
      '--vscode-editorHoverWidget-border': '#6fc3df',
      '--vscode-button-secondaryBackground': '#000000',
      '--vscode-button-secondaryForeground': '#ffffff',
      '--vscode-list-hoverBackground': '#000000',
      '--vscode-font-family': 'sans-serif',
      '--vscode-font-size': '13px',
      '--vscode-editor-font-size': '12px',
    },
  },
};

export type Theme = 'light' | 'dark' | 'high-contrast';
export const THEME_NAMES: Theme[] = ['light', 'dark', 'high-contrast'];
/** The editor background of each theme of the test page. */
export const THEME_BACKGROUND: Record<Theme, string> = { light: '#ffffff', dark: '#1f1f1f', 'high-contrast': '#000000' };
export const THEME_FOCUS: Record<Theme, string> = { light: '#005fb8', dark: '#0078d4', 'high-contrast': '#f38518' };

function testPage(theme: string | null): string {
  const t = theme ? THEMES[theme] : undefined;
  const style = t ? Object.entries(t.vars).map(([k, v]) => `${k}: ${v}`).join('; ') : '';
  return `<!DOCTYPE html>
<html lang="en" style="${style}">
<head><meta charset="UTF-8"><link rel="stylesheet" href="/media/webview.css"><title>Flame Graph test page</title></head>
<body class="${t?.bodyClass ?? ''}">
<div id="app"></div>
<script>
  // Stands in for VS Code's webview API.
  window.__posted = [];
  window.__state = undefined;
  window.acquireVsCodeApi = () => ({
    postMessage: (m) => window.__posted.push(m),
    getState: () => window.__state,
    setState: (s) => { window.__state = s; },
  });
</script>
<script src="/dist/webview.js"></script>
</body>
</html>`;
}

export class Harness {
  browser!: Browser;
  server!: Server;
  port = 0;
  home = '';
  pageErrors: string[] = [];
  /** Extra pages served as they are: path -> HTML. */
  readonly pages = new Map<string, string>();

  async start(): Promise<void> {
    const files: Record<string, [string, string]> = {
      '/dist/webview.js': [join(clientRoot, 'dist', 'webview.js'), 'text/javascript'],
      '/media/webview.css': [join(clientRoot, 'media', 'webview.css'), 'text/css'],
    };
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (url.pathname === '/') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(testPage(url.searchParams.get('theme')));
        return;
      }
      const extra = this.pages.get(url.pathname);
      if (extra !== undefined) {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(extra);
        return;
      }
      if (url.pathname === '/favicon.ico') {
        res.writeHead(204).end();
        return;
      }
      const f = files[url.pathname];
      if (!f) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': f[1] });
      res.end(readFileSync(f[0]));
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as AddressInfo).port;
    this.home = mkdtempSync(join(tmpdir(), 'dapprof-chromium-'));
    mkdirSync(screenshotDir, { recursive: true });
    this.browser = await launchChromium(CHROMIUM, this.home);
  }

  async open(theme: Theme | null = 'light', size = { width: 1200, height: 720 }, path?: string, init?: () => void): Promise<Page> {
    const page = await this.browser.newPage({ viewport: size, deviceScaleFactor: 1 });
    if (init) await page.addInitScript(init);
    page.setDefaultTimeout(30_000);
    page.on('pageerror', (e) => this.pageErrors.push(String(e)));
    page.on('console', (m) => {
      if (m.type() === 'error') this.pageErrors.push(m.text());
    });
    await page.goto(`http://127.0.0.1:${this.port}${path ?? `/${theme ? `?theme=${theme}` : ''}`}`);
    await page.waitForFunction(() => (window as unknown as { __dapprof?: unknown }).__dapprof !== undefined);
    return page;
  }

  async stop(): Promise<void> {
    await this.browser?.close().catch(() => undefined);
    await new Promise((r) => this.server?.close(r));
    if (this.home) rmSync(this.home, { recursive: true, force: true });
  }
}

/** A harness started before the tests of the calling file and stopped after them. */
export function harnessForFile(): Harness {
  const h = new Harness();
  before(() => h.start());
  after(() => h.stop());
  return h;
}
