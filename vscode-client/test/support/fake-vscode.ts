// A stand-in for the `vscode` module. VS Code's extension host cannot run on a build machine
// without a display, so the unit tests drive the extension through this stub: it records what
// the extension asks of VS Code (commands, context keys, messages, status bar, webview posts,
// debug sessions started) and lets the test fire VS Code's events. Importing this module first
// makes `require('vscode')` return it.

import Module from 'module';

type Listener<T> = (e: T) => unknown;
class Emitter<T> {
  private listeners: Listener<T>[] = [];
  event = (l: Listener<T>) => {
    this.listeners.push(l);
    return { dispose: () => (this.listeners = this.listeners.filter((x) => x !== l)) };
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) l(e);
  }
}

export class Uri {
  constructor(
    readonly scheme: string,
    readonly fsPath: string,
  ) {}
  static file(p: string): Uri {
    return new Uri('file', p);
  }
  static joinPath(base: Uri, ...parts: string[]): Uri {
    return new Uri(base.scheme, [base.fsPath.replace(/\/$/, ''), ...parts].join('/'));
  }
  get path(): string {
    return this.fsPath;
  }
  toString(): string {
    return `${this.scheme}://${this.fsPath}`;
  }
}

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}
export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(start: Position | number, end: Position | number, endLine?: number, endCharacter?: number) {
    if (typeof start === 'number') {
      this.start = new Position(start, end as number);
      this.end = new Position(endLine!, endCharacter!);
    } else {
      this.start = start;
      this.end = end as Position;
    }
  }
}
export class ThemeIcon {
  constructor(readonly id: string) {}
}
export const TreeItemCollapsibleState = { None: 0, Collapsed: 1, Expanded: 2 };
export class TreeItem {
  description?: string;
  tooltip?: string;
  iconPath?: ThemeIcon;
  command?: { command: string; title: string; arguments?: unknown[] };
  contextValue?: string;
  constructor(
    readonly label: string,
    readonly collapsibleState: number,
  ) {}
}
/** A view made by createTreeView: its provider, and the message it shows above the tree. */
export interface FakeTreeView {
  provider: { getChildren(e?: unknown): unknown[]; getTreeItem(e: unknown): TreeItem; onDidChangeTreeData?: unknown };
  message: string | undefined;
  disposed: boolean;
}
export class ThemeColor {
  constructor(readonly id: string) {}
}
export class MarkdownString {
  isTrusted = false;
  constructor(readonly value = '') {}
}
export class CodeLens {
  constructor(
    readonly range: Range,
    readonly command?: { title: string; command: string; tooltip?: string; arguments?: unknown[] },
  ) {}
}
export class EventEmitter<T> {
  private readonly emitter = new Emitter<T>();
  readonly event = this.emitter.event;
  fire(e: T): void {
    this.emitter.fire(e);
  }
  dispose(): void {}
}
export const OverviewRulerLane = { Left: 1, Center: 2, Right: 4, Full: 7 };
export const ConfigurationTarget = { Global: 1, Workspace: 2, WorkspaceFolder: 3 };

/** A text document of a file, and an editor showing it: what line heat decorates. */
export class FakeDocument {
  readonly uri: Uri;
  readonly lines: string[];
  constructor(fsPath: string, text: string) {
    this.uri = Uri.file(fsPath);
    this.lines = text.split('\n');
  }
  get lineCount(): number {
    return this.lines.length;
  }
  lineAt(line: number) {
    const text = this.lines[line];
    return { text, range: new Range(line, 0, line, text.length), firstNonWhitespaceCharacterIndex: text.length - text.trimStart().length };
  }
}
export interface FakeDecoration {
  range: Range;
  hoverMessage?: MarkdownString;
  renderOptions?: { after?: { contentText?: string } };
}
export class FakeEditor {
  /** Decoration type id -> what was last set. */
  readonly decorations = new Map<number, FakeDecoration[]>();
  constructor(readonly document: FakeDocument) {}
  setDecorations(type: { id: number }, options: FakeDecoration[]): void {
    this.decorations.set(type.id, options);
  }
}
export class DebugAdapterExecutable {
  constructor(
    readonly command: string,
    readonly args: string[],
  ) {}
}
export class DebugAdapterServer {
  constructor(
    readonly port: number,
    readonly host?: string,
  ) {}
}
export const StatusBarAlignment = { Left: 1, Right: 2 };
export const ViewColumn = { Active: -1, Beside: -2, One: 1, Two: 2 };

export interface FakeSession {
  id: string;
  name: string;
  type: string;
  workspaceFolder: undefined | { uri: Uri; name: string; index: number };
  configuration: Record<string, unknown>;
  requests: Array<[string, unknown]>;
  customRequest(command: string, args?: unknown): Promise<unknown>;
  /** How the fake adapter answers a request; rejects like VS Code with the adapter's message. */
  answer: (command: string, args: unknown) => unknown;
}

export function makeSession(id: string, type = 'dapprof', name = `session ${id}`): FakeSession {
  const s: FakeSession = {
    id,
    name,
    type,
    workspaceFolder: { uri: Uri.file('/ws'), name: 'ws', index: 0 },
    configuration: { type, request: 'launch', name },
    requests: [],
    answer: () => ({}),
    customRequest(command, args) {
      s.requests.push([command, args]);
      try {
        return Promise.resolve(s.answer(command, args));
      } catch (e) {
        return Promise.reject(e);
      }
    },
  };
  return s;
}

export interface FakeSaveOptions {
  defaultUri?: Uri;
  filters?: Record<string, string[]>;
}

export interface FakePanel {
  posted: unknown[];
  html: string;
  disposed: boolean;
  receive(message: unknown): void;
  dispose(): void;
}

function createState() {
  return {
    commands: new Map<string, (...a: unknown[]) => unknown>(),
    executed: [] as unknown[][],
    contexts: new Map<string, unknown>(),
    errors: [] as string[],
    infos: [] as string[],
    warnings: [] as string[],
    /** What showInformationMessage resolves to, and the buttons each message offered. */
    infoChoice: undefined as string | undefined,
    infoChoices: [] as string[][],
    quickPick: undefined as string | undefined,
    quickPickItems: [] as string[][],
    saveUri: undefined as Uri | undefined,
    saveDialogs: [] as FakeSaveOptions[],
    /** What showOpenDialog resolves to (one file, or cancelled), and the options each was given. */
    openUri: undefined as Uri | undefined,
    openDialogs: [] as unknown[],
    written: new Map<string, Uint8Array>(),
    existing: new Set<string>(),
    shownDocuments: [] as Array<{ uri: Uri; options: { selection?: Range } }>,
    config: {} as Record<string, unknown>,
    configUpdates: [] as Array<[string, unknown, unknown]>,
    onConfigChanged: new Emitter<{ affectsConfiguration(section: string): boolean }>(),
    decorationTypes: [] as Array<{ id: number; options: unknown; disposed: boolean }>,
    codeLensProviders: [] as Array<{ selector: unknown; provider: { provideCodeLenses(doc: unknown): CodeLens[]; onDidChangeCodeLenses?: (l: () => void) => unknown } }>,
    visibleTextEditors: [] as FakeEditor[],
    onVisibleEditorsChanged: new Emitter<FakeEditor[]>(),
    statusBar: { text: '', tooltip: '', visible: false, command: '' },
    statusBars: [] as Array<{ text: string; tooltip: string; visible: boolean; command: string }>,
    panels: [] as FakePanel[],
    treeViews: new Map<string, FakeTreeView>(),
    customEditors: new Map<string, unknown>(),
    configProviders: new Map<string, unknown>(),
    /** Lines written to output channels, by channel name; and the channels shown. */
    output: new Map<string, string[]>(),
    outputShown: [] as string[],
    started: [] as Array<{ folder: unknown; config: Record<string, unknown>; options: Record<string, unknown> }>,
    startDebuggingResult: true,
    trackerFactories: [] as Array<[string, { createDebugAdapterTracker(s: unknown): { onDidSendMessage?(m: unknown): void } | undefined }]>,
    activeDebugSession: undefined as FakeSession | undefined,
    activeTextEditor: undefined as unknown,
    /** Open documents (workspace.textDocuments): `save` records the save and resolves to its result. */
    textDocuments: [] as Array<{ uri: Uri; isDirty: boolean; save(): Promise<boolean> }>,
    onCustomEvent: new Emitter<{ session: FakeSession; event: string; body: unknown }>(),
    onActiveChanged: new Emitter<FakeSession | undefined>(),
    onTerminate: new Emitter<FakeSession>(),
  };
}

export type FakeState = ReturnType<typeof createState>;
export let fake: FakeState = createState();

/** A fresh stub state for each test. */
export function resetFake(): FakeState {
  fake = createState();
  return fake;
}

export const vscodeStub = {
  Uri,
  Position,
  Range,
  DebugAdapterExecutable,
  DebugAdapterServer,
  StatusBarAlignment,
  ViewColumn,
  ThemeColor,
  ThemeIcon,
  TreeItem,
  TreeItemCollapsibleState,
  MarkdownString,
  CodeLens,
  EventEmitter,
  OverviewRulerLane,
  ConfigurationTarget,
  languages: {
    registerCodeLensProvider(selector: unknown, provider: FakeState['codeLensProviders'][number]['provider']) {
      fake.codeLensProviders.push({ selector, provider });
      return { dispose: () => (fake.codeLensProviders = fake.codeLensProviders.filter((p) => p.provider !== provider)) };
    },
  },
  commands: {
    registerCommand(id: string, fn: (...a: unknown[]) => unknown) {
      fake.commands.set(id, fn);
      return { dispose: () => fake.commands.delete(id) };
    },
    executeCommand(id: string, ...args: unknown[]) {
      fake.executed.push([id, ...args]);
      if (id === 'setContext') fake.contexts.set(args[0] as string, args[1]);
      const fn = fake.commands.get(id);
      return Promise.resolve(fn ? fn(...args) : undefined);
    },
  },
  window: {
    createStatusBarItem() {
      // The first item made is the sample count's (status.ts): `fake.statusBar`; later ones (the
      // profile-only runs' Stop and Restart) have their own, in `fake.statusBars`.
      const sb = fake.statusBars.length === 0 ? fake.statusBar : { text: '', tooltip: '', visible: false, command: '' };
      fake.statusBars.push(sb);
      return {
        get text() {
          return sb.text;
        },
        set text(v: string) {
          sb.text = v;
        },
        get tooltip() {
          return sb.tooltip;
        },
        set tooltip(v: string) {
          sb.tooltip = v;
        },
        set command(v: string) {
          sb.command = v;
        },
        show: () => (sb.visible = true),
        hide: () => (sb.visible = false),
        dispose: () => (sb.visible = false),
      };
    },
    createOutputChannel(name: string) {
      const lines = fake.output.get(name) ?? [];
      fake.output.set(name, lines);
      return { appendLine: (l: string) => lines.push(l), append: (t: string) => lines.push(t), show: () => fake.outputShown.push(name), dispose() {} };
    },
    showErrorMessage: (m: string) => (fake.errors.push(m), Promise.resolve(undefined)),
    showWarningMessage: (m: string) => (fake.warnings.push(m), Promise.resolve(undefined)),
    showInformationMessage: (m: string, ...choices: string[]) => (fake.infos.push(m), fake.infoChoices.push(choices), Promise.resolve(fake.infoChoice)),
    showQuickPick: (items: Array<{ label: string }>) => (fake.quickPickItems.push(items.map((i) => i.label)), Promise.resolve(items.find((i) => i.label === fake.quickPick))),
    showOpenDialog: (options: unknown) => (fake.openDialogs.push(options), Promise.resolve(fake.openUri ? [fake.openUri] : undefined)),
    showSaveDialog: (options: unknown) => (fake.saveDialogs.push(options as FakeSaveOptions), Promise.resolve(fake.saveUri)),
    showTextDocument: (uri: Uri, options: { selection?: Range }) => (fake.shownDocuments.push({ uri, options }), Promise.resolve({})),
    registerCustomEditorProvider(viewType: string, provider: unknown) {
      fake.customEditors.set(viewType, provider);
      return { dispose() {} };
    },
    get activeTextEditor() {
      return fake.activeTextEditor;
    },
    get visibleTextEditors() {
      return fake.visibleTextEditors;
    },
    onDidChangeVisibleTextEditors: (l: Listener<FakeEditor[]>) => fake.onVisibleEditorsChanged.event(l),
    createTextEditorDecorationType(options: unknown) {
      const t = { id: fake.decorationTypes.length, options, disposed: false, dispose: () => (t.disposed = true) };
      fake.decorationTypes.push(t);
      return t;
    },
    createTreeView(id: string, options: { treeDataProvider: FakeTreeView['provider'] }) {
      const view: FakeTreeView = { provider: options.treeDataProvider, message: undefined, disposed: false };
      fake.treeViews.set(id, view);
      return {
        set message(m: string | undefined) {
          view.message = m;
        },
        get message() {
          return view.message;
        },
        dispose: () => (view.disposed = true),
      };
    },
    createWebviewPanel() {
      const receivers: Array<(m: unknown) => void> = [];
      const disposers: Array<() => void> = [];
      const panel: FakePanel = {
        posted: [],
        html: '',
        disposed: false,
        receive: (m) => receivers.forEach((r) => r(m)),
        dispose: () => {
          panel.disposed = true;
          disposers.forEach((d) => d());
        },
      };
      fake.panels.push(panel);
      return {
        webview: {
          cspSource: 'vscode-resource:',
          asWebviewUri: (u: Uri) => u,
          set html(h: string) {
            panel.html = h;
          },
          postMessage: (m: unknown) => (panel.posted.push(JSON.parse(JSON.stringify(m))), Promise.resolve(true)),
          onDidReceiveMessage: (r: (m: unknown) => void) => (receivers.push(r), { dispose() {} }),
        },
        onDidDispose: (d: () => void) => (disposers.push(d), { dispose() {} }),
        reveal() {},
        dispose: () => panel.dispose(),
      };
    },
  },
  workspace: {
    getConfiguration(section: string) {
      return {
        get<T>(key: string, def: T): T {
          const v = fake.config[`${section}.${key}`];
          return v === undefined ? def : (v as T);
        },
        update(key: string, value: unknown, target: unknown) {
          const name = `${section}.${key}`;
          fake.config[name] = value;
          fake.configUpdates.push([name, value, target]);
          fake.onConfigChanged.fire({ affectsConfiguration: (s: string) => name === s || name.startsWith(`${s}.`) });
          return Promise.resolve();
        },
      };
    },
    onDidChangeConfiguration: (l: Listener<{ affectsConfiguration(section: string): boolean }>) => fake.onConfigChanged.event(l),
    get workspaceFolders() {
      return [{ uri: Uri.file('/ws'), name: 'ws', index: 0 }];
    },
    getWorkspaceFolder(uri: Uri) {
      return uri.fsPath.startsWith('/ws/') ? { uri: Uri.file('/ws'), name: 'ws', index: 0 } : undefined;
    },
    get textDocuments() {
      return fake.textDocuments;
    },
    fs: {
      writeFile: (uri: Uri, data: Uint8Array) => (fake.written.set(uri.fsPath, data), Promise.resolve()),
      stat: (uri: Uri) => (fake.existing.has(uri.fsPath) ? Promise.resolve({}) : Promise.reject(new Error('ENOENT'))),
    },
  },
  debug: {
    get activeDebugSession() {
      return fake.activeDebugSession;
    },
    registerDebugAdapterTrackerFactory(type: string, f: { createDebugAdapterTracker(s: unknown): { onDidSendMessage?(m: unknown): void } | undefined }) {
      fake.trackerFactories.push([type, f]);
      return { dispose() {} };
    },
    registerDebugAdapterDescriptorFactory: () => ({ dispose() {} }),
    registerDebugConfigurationProvider(type: string, provider: unknown) {
      fake.configProviders.set(type, provider);
      return { dispose() {} };
    },
    onDidReceiveDebugSessionCustomEvent: (l: Listener<{ session: FakeSession; event: string; body: unknown }>) => fake.onCustomEvent.event(l),
    onDidChangeActiveDebugSession: (l: Listener<FakeSession | undefined>) => fake.onActiveChanged.event(l),
    onDidTerminateDebugSession: (l: Listener<FakeSession>) => fake.onTerminate.event(l),
    startDebugging(folder: unknown, config: Record<string, unknown>, options: Record<string, unknown>) {
      fake.started.push({ folder, config, options });
      return Promise.resolve(fake.startDebuggingResult);
    },
  },
};

// Route require('vscode') to the stub.
const mod = Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown };
const load = mod._load;
mod._load = function (request: string, ...rest: unknown[]) {
  if (request === 'vscode') return vscodeStub;
  return load.call(this, request, ...rest);
};

// ---- helpers for tests ---------------------------------------------------------------------

/** Makes a session active and lets its adapter answer `initialize` (with or without the capability). */
export function startSession(s: FakeSession, supportsProfiling: boolean, supportsStacks = false): void {
  for (const [type, f] of fake.trackerFactories) {
    if (type !== '*' && type !== s.type) continue;
    // A factory may give no tracker to a session (VS Code allows undefined).
    const tracker = f.createDebugAdapterTracker(s);
    tracker?.onDidSendMessage?.({ seq: 1, type: 'response', request_seq: 1, success: true, command: 'initialize', body: { supportsConfigurationDoneRequest: true, ...(supportsProfiling ? { supportsProfiling: true } : {}), ...(supportsStacks ? { supportsProfilingStacks: true } : {}) } });
  }
  fake.activeDebugSession = s;
  fake.onActiveChanged.fire(s);
}

/** Lets pending promise callbacks run. */
export function settle(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}
