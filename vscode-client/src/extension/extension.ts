// Extension entry point.

import * as vscode from 'vscode';
import { DapprofAdapterFactory, DapprofConfigurationProvider } from './adapter';
import { AsyncTasksView } from './async-tasks';
import { ProfilingController } from './controller';
import { settingsDapprof } from './dapprof-path';
import { DEFAULT_KEPT, RunStore } from './run-store';
import { registerProfileFileEditors } from './profile-file';
import { registerProfileOnly } from './profile-only';

let controller: ProfilingController | undefined;

export function activate(context: vscode.ExtensionContext): ProfilingController {
  // Finished runs are kept in the workspace's storage (the global one without a workspace).
  const store = new RunStore((context.storageUri ?? context.globalStorageUri)?.fsPath, () =>
    vscode.workspace.getConfiguration('dapprof').get<number>('keptRuns', DEFAULT_KEPT),
  );
  controller = new ProfilingController(context.extensionUri, (folder) => settingsDapprof(context.extensionUri.fsPath, folder), store);
  context.subscriptions.push(
    controller,
    vscode.debug.registerDebugAdapterDescriptorFactory('dapprof', new DapprofAdapterFactory(context.extensionUri.fsPath)),
    vscode.debug.registerDebugConfigurationProvider('dapprof', new DapprofConfigurationProvider()),
    ...registerProfileFileEditors(context.extensionUri),
    ...registerProfileOnly(controller, context.extensionUri.fsPath),
    new AsyncTasksView(() => controller?.dapprofSession()),
  );
  return controller;
}

export function deactivate(): void {
  controller = undefined;
}
