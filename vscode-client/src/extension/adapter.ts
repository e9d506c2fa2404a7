// The `dapprof` debug type: runs `dapprof stdio` as the debug adapter, and fills in a launch
// configuration when there is none. The configuration is debugpy's and is passed through.
// Which dapprof runs, and the check that it does, are in executable.ts and dapprof-path.ts.

import * as vscode from 'vscode';
import { settingsDapprof } from './dapprof-path';

export { bundledExecutable, findExecutable } from './executable';

/** host:port of an attach configuration's `connect`, if it has a usable one. */
function connectAddress(config: vscode.DebugConfiguration): { host: string; port: number } | undefined {
  const c = config.connect as { host?: unknown; port?: unknown } | undefined;
  const port = Number(c?.port);
  if (config.request !== 'attach' || !c || !Number.isInteger(port) || port <= 0 || port > 65535) return undefined;
  return { host: typeof c.host === 'string' && c.host ? c.host : '127.0.0.1', port };
}

export class DapprofAdapterFactory implements vscode.DebugAdapterDescriptorFactory {
  /** `extensionPath`: the installed extension, whose bin/ holds the dapprof of a platform .vsix. */
  constructor(private readonly extensionPath?: string) {}

  async createDebugAdapterDescriptor(session: vscode.DebugSession): Promise<vscode.DebugAdapterDescriptor> {
    const address = connectAddress(session.configuration);
    // A child process's session (debugpyAttach): `connect` is the port where the parent's dapprof
    // opens the child's session, a debug adapter already; VS Code talks to it directly.
    if (address && session.configuration.subProcessId !== undefined) return new vscode.DebugAdapterServer(address.port, address.host);
    const exe = await settingsDapprof(this.extensionPath, session.workspaceFolder);
    // Attaching to debugpy.listen(): what listens there is debugpy's adapter, which dapprof then
    // connects to instead of starting one of its own.
    if (address) return new vscode.DebugAdapterExecutable(exe, ['stdio', `--connect=${address.host}:${address.port}`]);
    return new vscode.DebugAdapterExecutable(exe, ['stdio']);
  }
}

export const DEFAULT_LAUNCH: vscode.DebugConfiguration = {
  type: 'dapprof',
  request: 'launch',
  name: 'Python: Current File (dapprof)',
  program: '${file}',
  console: 'integratedTerminal',
  justMyCode: true,
};

export class DapprofConfigurationProvider implements vscode.DebugConfigurationProvider {
  provideDebugConfigurations(): vscode.DebugConfiguration[] {
    return [{ ...DEFAULT_LAUNCH }];
  }

  resolveDebugConfiguration(_folder: vscode.WorkspaceFolder | undefined, config: vscode.DebugConfiguration): vscode.ProviderResult<vscode.DebugConfiguration> {
    // F5 without a launch.json: debug the current Python file.
    if (!config.type && !config.request && !config.name) {
      const editor = vscode.window.activeTextEditor;
      if (editor && editor.document.languageId === 'python') return { ...DEFAULT_LAUNCH };
      void vscode.window.showInformationMessage('Open a Python file to debug it, or add a "dapprof" launch configuration.');
      return undefined;
    }
    if (config.request === 'launch' && !config.program && !config.module && !config.code) {
      void vscode.window.showErrorMessage('The dapprof launch configuration needs "program", "module" or "code".');
      return undefined;
    }
    if (config.request === 'attach' && !config.connect && !config.listen && !config.processId && config.port === undefined) {
      void vscode.window.showErrorMessage('The dapprof attach configuration needs "connect", "listen" or "processId".');
      return undefined;
    }
    return config;
  }
}
