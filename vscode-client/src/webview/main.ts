// Entry point of the flame graph webview. In VS Code `acquireVsCodeApi` is provided by the
// webview host; a test page defines its own before loading this script.

import { App, VsCodeApi } from './app';

declare function acquireVsCodeApi(): VsCodeApi;

const api = acquireVsCodeApi();
const app = new App(api, document.getElementById('app') ?? document.body);
// Exposed for tests and for debugging the page from the webview developer tools.
(window as unknown as { __dapprof: App }).__dapprof = app;
// The page's "Hide debugger" choice goes with it: the extension exports what the panel shows.
api.postMessage({ type: 'ready', hideDebugger: app.hideDebugger });
