// The workspace the end-to-end test opens: its launch configurations, one per way a session
// reaches dapprof, and the settings that keep VS Code's workbench quiet and predictable.

/** .vscode/launch.json of the test's workspace (`${workspaceFolder}` holds the fixtures). */
export function launchConfigurations(listenPort: number, servePort: number): object {
  return {
    version: '0.2.0',
    configurations: [
      {
        type: 'dapprof',
        request: 'launch',
        name: 'app.py (dapprof)',
        program: '${workspaceFolder}/app.py',
        args: ['${workspaceFolder}/continue.flag'],
        python: '/usr/bin/python3',
        console: 'internalConsole',
        justMyCode: true,
      },
      {
        type: 'dapprof',
        request: 'launch',
        name: 'spawner.py (dapprof)',
        program: '${workspaceFolder}/spawner.py',
        args: ['${workspaceFolder}/child-done.flag'],
        python: '/usr/bin/python3',
        console: 'internalConsole',
        subProcess: true,
      },
      {
        // VS Code connects to a running `dapprof serve` instead of starting an adapter: the
        // extension learns from the tracker that this session supports profiling.
        type: 'dapprof',
        request: 'launch',
        name: 'app.py through dapprof serve',
        program: '${workspaceFolder}/app.py',
        args: ['${workspaceFolder}/serve-done.flag'],
        python: '/usr/bin/python3',
        console: 'internalConsole',
        debugServer: servePort,
      },
      {
        type: 'dapprof',
        request: 'attach',
        name: 'attach to debugpy --listen (dapprof)',
        connect: { host: '127.0.0.1', port: listenPort },
        justMyCode: true,
      },
    ],
  };
}

/** User settings of the code-server the test runs: no tips, updates, telemetry or git. */
export const WORKBENCH_SETTINGS = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'remote.autoForwardPorts': false,
  'git.enabled': false,
  'git.openRepositoryInParentFolders': 'never',
  'security.workspace.trust.enabled': false,
  'debug.internalConsoleOptions': 'neverOpen',
  // The panel opens beside the editor; room for both at 1680 px.
  'workbench.sideBar.location': 'left',
};
