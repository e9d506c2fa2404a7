// Line heat: the shown run's own and total share of each sampled line of the open Python files, as
// a gutter mark (a few intensity levels) and an end-of-line annotation whose hover links to the
// line's node in the flame graph; and the CodeLens above each sampled function (heat-lens.ts).
//
// The host aggregates the shown run here with the webview's own model (src/model), for the view
// the panel shows (its thread, "Hide debugger"): the page's figures and the editor's agree. The
// editor is redrawn at most every THROTTLE_MS, however fast batches arrive. A run that samples
// waiting asyncio tasks (async "all") shows the time tasks wait on a line apart from the running
// figures ("N ms waiting"), whatever the panel's "Waiting tasks" shows.

import * as vscode from 'vscode';
import { ProfileModel } from '../model/profile';
import type { ProfilingDataBody } from '../model/protocol';
import { FileHeat, heatLevel, heatText, SourceHeat, sourceHeat, waitingText } from '../model/source-heat';
import type { RunInfo } from '../webview/messages';
import { HeatLenses } from './heat-lens';
import { SourcePaths } from './source-paths';

export const THROTTLE_MS = 250;
export const LEVELS = 4;
export const CONTEXT_LINE_HEAT = 'dapprof.lineHeat.available';

/** What a click in the editor reveals in the flame graph: a function, or one line of it. */
export interface RevealTarget {
  file: string;
  function: string;
  line?: number;
}

export class LineHeat implements vscode.Disposable {
  private model: ProfileModel | undefined;
  private thread: number | undefined;
  private hideDebugger = true;
  /** The run samples waiting tasks: their samples are waiting time, apart from the rest. */
  private splitWaiting = false;
  /** Milliseconds a sample stands for (a tick), when the rate is known. */
  private msPerSample: number | undefined;
  private heat: SourceHeat | undefined;
  /** The heat's files by normalised real path. */
  private byPath = new Map<string, FileHeat & { file: string }>();
  private readonly levels: vscode.TextEditorDecorationType[];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private lastRender = -Infinity;
  /** Renders so far (tests read it to check the throttle). */
  renders = 0;
  readonly lenses = new HeatLenses(
    (doc) => this.fileOf(doc),
    () => this.heat?.sampleCount ?? 0,
    () => this.msPerSample,
  );
  /** Lines where tasks only wait: the end-of-line text, no gutter mark. */
  private readonly waitingOnly: vscode.TextEditorDecorationType;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    extensionUri: vscode.Uri,
    private readonly paths: SourcePaths,
  ) {
    this.levels = [];
    for (let l = 1; l <= LEVELS; l++) {
      const icon = (theme: string) => vscode.Uri.joinPath(extensionUri, 'media', `heat-${l}-${theme}.svg`);
      this.levels.push(
        vscode.window.createTextEditorDecorationType({
          light: { gutterIconPath: icon('light') },
          dark: { gutterIconPath: icon('dark') },
          gutterIconSize: 'contain',
          overviewRulerLane: vscode.OverviewRulerLane.Left,
          overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.warningForeground'),
          after: { color: new vscode.ThemeColor('editorCodeLens.foreground'), margin: '0 0 0 2em', fontStyle: 'italic' },
        }),
      );
    }
    this.waitingOnly = vscode.window.createTextEditorDecorationType({
      after: { color: new vscode.ThemeColor('editorCodeLens.foreground'), margin: '0 0 0 2em', fontStyle: 'italic' },
    });
    const d = this.disposables;
    d.push(...this.levels, this.waitingOnly, this.lenses);
    d.push(vscode.languages.registerCodeLensProvider({ language: 'python' }, this.lenses));
    d.push(vscode.window.onDidChangeVisibleTextEditors(() => this.decorate()));
    d.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('dapprof.lineHeat')) this.render();
      }),
    );
    d.push(vscode.commands.registerCommand('dapprof.toggleLineHeat', () => this.toggle()));
  }

  dispose(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    for (const d of this.disposables) d.dispose();
  }

  get enabled(): boolean {
    return vscode.workspace.getConfiguration('dapprof.lineHeat').get<boolean>('enabled', true);
  }

  async toggle(): Promise<void> {
    await vscode.workspace.getConfiguration('dapprof.lineHeat').update('enabled', !this.enabled, vscode.ConfigurationTarget.Global);
    this.render();
  }

  /** A run to show: its batches so far (none when it starts) and what it samples; undefined for none. */
  load(bodies: readonly ProfilingDataBody[] | undefined, run?: Pick<RunInfo, 'async' | 'rate'>): void {
    this.splitWaiting = run?.async === 'all';
    this.msPerSample = run?.rate ? 1000 / run.rate : undefined;
    // Another run may have another working directory for its relative paths.
    this.paths.clear();
    this.model = bodies === undefined ? undefined : ProfileModel.of(bodies);
    // The page starts every run on all threads.
    this.thread = undefined;
    this.schedule();
  }

  add(body: ProfilingDataBody): void {
    if (this.model === undefined) return;
    this.model.addBatch(body);
    this.schedule();
  }

  /** The panel's view: its thread filter and "Hide debugger". */
  setView(view: { thread?: number | undefined; hideDebugger?: boolean }): void {
    if ('thread' in view) this.thread = view.thread;
    if (view.hideDebugger !== undefined) this.hideDebugger = view.hideDebugger;
    this.schedule();
  }

  /** The heat of a file as sampled, if any (tests and the CodeLens read it). */
  fileOf(doc: vscode.TextDocument): (FileHeat & { file: string }) | undefined {
    return doc.uri.scheme === 'file' ? this.byPath.get(this.paths.key(doc.uri.fsPath)) : undefined;
  }

  get sampleCount(): number {
    return this.heat?.sampleCount ?? 0;
  }

  /** Renders on the next throttle tick: at once if the last render is old enough. */
  private schedule(): void {
    if (this.timer !== undefined) return;
    const wait = Math.max(0, this.lastRender + THROTTLE_MS - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.render();
    }, wait);
  }

  private render(): void {
    this.lastRender = Date.now();
    this.renders++;
    const on = this.enabled && this.model !== undefined;
    this.heat = on ? sourceHeat(this.model!, this.thread, this.hideDebugger, this.splitWaiting) : undefined;
    this.byPath = new Map();
    for (const [file, fh] of this.heat?.files ?? []) {
      const key = this.paths.key(file);
      if (!this.byPath.has(key)) this.byPath.set(key, { ...fh, file });
    }
    void vscode.commands.executeCommand('setContext', CONTEXT_LINE_HEAT, this.model !== undefined);
    this.decorate();
    this.lenses.refresh();
  }

  private decorate(): void {
    const n = this.heat?.sampleCount ?? 0, ms = this.msPerSample;
    for (const editor of vscode.window.visibleTextEditors) {
      const fh = this.fileOf(editor.document);
      const byLevel: vscode.DecorationOptions[][] = this.levels.map(() => []);
      const waiting: vscode.DecorationOptions[] = [];
      for (const [line, h] of fh?.lines ?? []) {
        if (line > editor.document.lineCount || (h.total <= 0 && h.waiting <= 0)) continue;
        const text = editor.document.lineAt(line - 1);
        const start = text.firstNonWhitespaceCharacterIndex;
        const figures = h.total > 0 ? `${heatText({ ...h, waiting: 0 }, n)} of ${n} samples${h.waiting > 0 ? ` · ${waitingText(h.waiting, ms)} (waiting tasks)` : ''}` : `${waitingText(h.waiting, ms)} (waiting tasks)`;
        const hover = new vscode.MarkdownString(`**dapprof** · ${h.function}: ${figures}\n\n[Show in flame graph](${revealUri({ file: fh!.file, function: h.function, line })})`);
        hover.isTrusted = true;
        (h.total > 0 ? byLevel[heatLevel(h.total, n, LEVELS) - 1] : waiting).push({
          range: new vscode.Range(line - 1, start, line - 1, text.range.end.character),
          hoverMessage: hover,
          renderOptions: { after: { contentText: heatText(h, n, ms) } },
        });
      }
      this.levels.forEach((type, i) => editor.setDecorations(type, byLevel[i]));
      editor.setDecorations(this.waitingOnly, waiting);
    }
  }
}

/** A command link of a hover: reveals the target in the flame graph. */
export function revealUri(target: RevealTarget): string {
  return `command:dapprof.revealInFlameGraph?${encodeURIComponent(JSON.stringify([target]))}`;
}
