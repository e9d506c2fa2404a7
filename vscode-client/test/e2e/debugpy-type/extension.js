// For dapprof's end-to-end test only: the `debugpy` (and the older `python`) debug type as the
// Python extension's debugger provides it, which cannot be installed on the test machines.
// As that extension does: the adapter is `python -m debugpy.adapter` over stdio (the interpreter
// of the setting `debugpyType.python`, else python3); a configuration with `connect` (a child
// process's session) goes straight to that port; and debugpy's `debugpyAttach` event (a child
// process started) is answered with a child debug session of the body it carries. Nothing of
// dapprof is in here: what the test checks is that dapprof profiles such sessions unchanged.
const vscode = require('vscode');

/** @param {vscode.ExtensionContext} context */
function activate(context) {
  const factory = {
    createDebugAdapterDescriptor(session) {
      const connect = session.configuration.connect;
      if (connect && connect.port) return new vscode.DebugAdapterServer(Number(connect.port), connect.host || '127.0.0.1');
      const python = vscode.workspace.getConfiguration('debugpyType').get('python') || 'python3';
      return new vscode.DebugAdapterExecutable(python, ['-m', 'debugpy.adapter']);
    },
  };
  for (const type of ['debugpy', 'python']) context.subscriptions.push(vscode.debug.registerDebugAdapterDescriptorFactory(type, factory));
  context.subscriptions.push(
    vscode.debug.onDidReceiveDebugSessionCustomEvent((e) => {
      if (e.event !== 'debugpyAttach' || (e.session.type !== 'debugpy' && e.session.type !== 'python')) return;
      void vscode.debug.startDebugging(e.session.workspaceFolder, { ...e.body, type: e.session.type }, { parentSession: e.session, lifecycleManagedByParent: true });
    }),
  );
}

module.exports = { activate, deactivate() {} };
