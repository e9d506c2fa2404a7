// Profiling without a debugger: a `dapprof-profile` configuration (from a launch.json, or made by
// the commands Profile Process… and Profile Python File) runs `dapprof stdio --profile-only`, a
// debug adapter that only starts (launch) or finds (attach) the Python process and profiles it;
// no debugpy runs, so the program runs at full speed and a process started without debugpy can
// be profiled. The configuration goes through VS Code's resolution (variables such as
// ${command:dapprof.pickProcess} substituted), and then runs as a profile-only run rather than a
// debug session (profile-only-runs.ts says why): profiling starts at once, through the same path
// as Start Profiling, and the panel, export, line heat and summary treat it like any session.

import * as path from 'path';
import * as vscode from 'vscode';
import type { ProfilingController } from './controller';
import { settingsDapprof } from './dapprof-path';
import { ProfileOnlyRuns } from './profile-only-runs';
import { listPythonProcesses, pickPythonProcess, PythonProcess } from './processes';

export const PROFILE_TYPE = 'dapprof-profile';

/** The arguments of dapprof for a profile-only session. */
export const PROFILE_ONLY_ARGS: readonly string[] = ['stdio', '--profile-only'];

/** The interpreter that runs a profiled file: dapprof.python, else the Python extension's default, else python3. */
export function pythonInterpreter(folder?: vscode.WorkspaceFolder): string {
  const own = vscode.workspace.getConfiguration('dapprof', folder).get<string>('python', '').trim();
  if (own) return own;
  const python = vscode.workspace.getConfiguration('python', folder).get<string>('defaultInterpreterPath', '').trim();
  return python || 'python3';
}

export class ProfileOnlyAdapterFactory implements vscode.DebugAdapterDescriptorFactory {
  /** `extensionPath`: the installed extension, whose bin/ holds the dapprof of a platform .vsix. */
  constructor(private readonly extensionPath?: string) {}

  async createDebugAdapterDescriptor(session: vscode.DebugSession): Promise<vscode.DebugAdapterDescriptor> {
    const exe = await settingsDapprof(this.extensionPath, session.workspaceFolder);
    return new vscode.DebugAdapterExecutable(exe, [...PROFILE_ONLY_ARGS]);
  }
}

/** The launch configuration that profiles the Python file `file`. */
export function profileFileConfiguration(file: vscode.Uri, folder: vscode.WorkspaceFolder | undefined): vscode.DebugConfiguration {
  return {
    type: PROFILE_TYPE,
    request: 'launch',
    name: `Profile ${path.basename(file.fsPath)}`,
    program: file.fsPath,
    cwd: folder ? folder.uri.fsPath : path.dirname(file.fsPath),
    python: pythonInterpreter(folder),
  };
}

export class ProfileOnlyConfigurationProvider implements vscode.DebugConfigurationProvider {
  /** @param run runs a resolved configuration as a profile-only run (not a debug session) */
  constructor(private readonly run?: (config: vscode.DebugConfiguration, folder: vscode.WorkspaceFolder | undefined) => Promise<boolean>) {}

  /** The configuration resolved and its variables substituted: run it, and start no debug session (undefined). */
  resolveDebugConfigurationWithSubstitutedVariables(folder: vscode.WorkspaceFolder | undefined, config: vscode.DebugConfiguration): vscode.ProviderResult<vscode.DebugConfiguration> {
    if (!this.run) return config;
    void this.run(config, folder);
    return undefined;
  }

  resolveDebugConfiguration(folder: vscode.WorkspaceFolder | undefined, config: vscode.DebugConfiguration): vscode.ProviderResult<vscode.DebugConfiguration> {
    // F5 without a launch.json, this type chosen: profile the current Python file.
    if (!config.type && !config.request && !config.name) {
      const doc = vscode.window.activeTextEditor?.document;
      if (doc && doc.languageId === 'python') return profileFileConfiguration(doc.uri, vscode.workspace.getWorkspaceFolder(doc.uri) ?? folder);
      void vscode.window.showInformationMessage(`Open a Python file to profile it, or add a "${PROFILE_TYPE}" launch configuration.`);
      return undefined;
    }
    // The arguments are the daemon's to check (profile_only/arguments.cpp): VS Code shows its
    // refusal, which names the attribute to fix.
    // Without "python", the interpreter the Profile Python File command would use, not always python3.
    if (config.request === 'launch' && !config.python) return { ...config, python: pythonInterpreter(folder) };
    return config;
  }
}

/** The profile-only debug type, its commands, and the runs they start. */
export function registerProfileOnly(controller: ProfilingController, extensionPath: string | undefined): vscode.Disposable[] {
  const runs = new ProfileOnlyRuns(
    {
      addRun: (run, path) => controller.addRun(run, path),
      startProfiling: (session) => controller.startProfiling(session),
      stopProfiling: (session) => controller.stopProfiling(session),
      isProfiling: (session) => controller.isProfiling(session),
      runEvent: (run, event, body) => controller.onRunEvent(run, event, body),
      runEnded: (run) => controller.onRunEnded(run),
      // The run exists to be profiled: its graph is shown even when dapprof.profiling.openFlameGraph is off.
      showFlameGraph: (run) => {
        if (!controller.panel.isOpen) controller.showFlameGraph(controller.sessions.get(run.id));
      },
    },
    (folder) => settingsDapprof(extensionPath, folder),
  );

  /** Lets the user pick a Python process that dapprof can read; undefined if none was. */
  const pick = async (): Promise<PythonProcess | undefined> => {
    const folder = vscode.workspace.workspaceFolders?.[0];
    let processes: PythonProcess[];
    try {
      processes = await listPythonProcesses(await settingsDapprof(extensionPath, folder));
    } catch (e) {
      void vscode.window.showErrorMessage(`Cannot list the Python processes: ${e instanceof Error ? e.message : String(e)}`);
      return undefined;
    }
    return pickPythonProcess(processes);
  };

  // Through VS Code's resolution of the configuration, which ends in runs.start (the provider
  // above); dapprof's refusal (such as how to get the permission to read a process) is shown there.
  const start = async (config: vscode.DebugConfiguration, folder: vscode.WorkspaceFolder | undefined): Promise<boolean> => {
    try {
      return await vscode.debug.startDebugging(folder, config);
    } catch (e) {
      void vscode.window.showErrorMessage(`Could not start "${config.name}": ${e instanceof Error ? e.message : String(e)}`);
      return false;
    }
  };

  const profileProcess = async (): Promise<boolean> => {
    const p = await pick();
    if (!p) return false;
    return start({ type: PROFILE_TYPE, request: 'attach', name: `Profile ${p.pid}`, processId: p.pid }, vscode.workspace.workspaceFolders?.[0]);
  };

  const profilePythonFile = async (arg?: unknown): Promise<boolean> => {
    // From the editor's title bar or the explorer: the file's Uri; from the palette: the active editor's.
    const given = arg && typeof arg === 'object' && typeof (arg as vscode.Uri).fsPath === 'string' ? (arg as vscode.Uri) : undefined;
    const doc = vscode.window.activeTextEditor?.document;
    const uri = given ?? (doc?.languageId === 'python' ? doc.uri : undefined);
    if (!uri) {
      void vscode.window.showErrorMessage('Open a Python file to profile it.');
      return false;
    }
    if (uri.scheme !== 'file') {
      void vscode.window.showErrorMessage(`Cannot profile ${uri.toString()}: dapprof runs files on disk only. Save it as a file first.`);
      return false;
    }
    // The program that runs is the file on disk: unsaved edits would not be profiled.
    const open = (vscode.workspace.textDocuments ?? []).find((d) => d.uri.toString() === uri.toString());
    if (open?.isDirty && !(await open.save())) {
      void vscode.window.showErrorMessage(`Cannot profile ${path.basename(uri.fsPath)}: it could not be saved.`);
      return false;
    }
    const folder = vscode.workspace.getWorkspaceFolder(uri);
    return start(profileFileConfiguration(uri, folder), folder);
  };

  return [
    runs,
    vscode.debug.registerDebugAdapterDescriptorFactory(PROFILE_TYPE, new ProfileOnlyAdapterFactory(extensionPath)),
    vscode.debug.registerDebugConfigurationProvider(PROFILE_TYPE, new ProfileOnlyConfigurationProvider((config, folder) => runs.start(config, folder))),
    vscode.commands.registerCommand('dapprof.profileProcess', () => profileProcess()),
    vscode.commands.registerCommand('dapprof.profilePythonFile', (arg?: unknown) => profilePythonFile(arg)),
    // For "processId": "${command:dapprof.pickProcess}" in a launch.json: the picked ID, or undefined (cancels the start).
    vscode.commands.registerCommand('dapprof.pickProcess', async () => {
      const p = await pick();
      return p ? String(p.pid) : undefined;
    }),
  ];
}
