// The workspace the end-to-end test opens: its launch configurations, one per way a session
// reaches dapprof, the settings that keep VS Code's workbench quiet and predictable, and the
// interpreter of a root of its own (tests/support/pythons.py) that one run profiles.

import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

/** An interpreter that runs in a root of its own, as in a container (tests/support/pythons.py). */
export interface RootPython {
  label: string;
  /** A wrapper that runs it inside the root: dapprof's --python. */
  path: string;
  /** The interpreter as it sees itself inside the root: the launch configuration's `python`. */
  innerPath: string;
}

/** The interpreter `label` as tests/support/pythons.py finds it, or the reason it is missing. */
export function rootPython(repoRoot: string, label: string): RootPython | string {
  const out = spawnSync('/usr/bin/python3', [join(repoRoot, 'tests/support/pythons.py'), '--json'], { encoding: 'utf8' });
  if (out.status !== 0) return `tests/support/pythons.py failed: ${out.stderr}`;
  const found = JSON.parse(out.stdout) as { interpreters: Array<{ label: string; path: string; inner_path: string; root: string | null }>; missing: Record<string, string> };
  const i = found.interpreters.find((x) => x.label === label && x.root);
  if (i) return { label, path: i.path, innerPath: i.inner_path };
  return found.missing[label] ?? `${label} is not an interpreter in a root`;
}

/** The configuration that reaches the `dapprof serve` whose debugpy runs in the root. */
export function rootConfigurationName(label: string): string {
  return `app.py on ${label} through dapprof serve`;
}

/** .vscode/launch.json of the test's workspace (`${workspaceFolder}` holds the fixtures). */
export function launchConfigurations(listenPort: number, servePort: number, root?: { python: RootPython; port: number }): object {
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
      // debugpy's launcher starts the program inside the root, where only the interpreter's own
      // name means anything; the workspace is at the same path there (the root binds the
      // repository in).
      ...(root
        ? [
            {
              type: 'dapprof',
              request: 'launch',
              name: rootConfigurationName(root.python.label),
              program: '${workspaceFolder}/app.py',
              args: ['${workspaceFolder}/root-done.flag'],
              python: root.python.innerPath,
              console: 'internalConsole',
              debugServer: root.port,
            },
          ]
        : []),
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
