// Line heat: the shown run's own and total share of each sampled line of the open Python files, as
// a gutter mark (a few intensity levels) and an end-of-line annotation whose hover links to the
// line's node in the flame graph; and the CodeLens above each sampled function (heat-lens.ts).
//
// The host aggregates the shown run here with the webview's own model (src/model), for the view
// the panel shows (its thread, "Hide debugger"): the page's figures and the editor's agree. The
// editor is redrawn at most every THROTTLE_MS, however fast batches arrive. A run that samples
// waiting asyncio tasks (async "all") shows the time tasks wait on a line apart from the running
// figures ("N ms waiting"), whatever the panel's "Waiting tasks" shows. A run started with opcodes
// also underlines the hottest expressions of each line with their share of the line's samples, and
// the line's hover gives its instruction mix (sub-line heat, model/instruction-heat.ts).

import * as vscode from 'vscode';
import { ProfileModel } from '../model/profile';
import type { ProfilingDataBody } from '../model/protocol';
import { InstructionHeat, LineInstructions, opcodeMix, percent, utf16Column } from '../model/instruction-heat';
import { FileHeat, heatLevel, heatText, SourceHeat, sourceHeat, waitingText } from '../model/source-heat';
import type { RunInfo } from '../webview/messages';
import { HeatLenses } from './heat-lens';
import { SourcePaths } from './source-paths';

export const THROTTLE_MS = 250;
export const LEVELS = 4;
export const CONTEXT_LINE_HEAT = 'dapprof.lineHeat.available';
/** An expression is underlined when it holds at least this share of its line's samples... */
export const MIN_EXPRESSION_SHARE = 0.05;
/** ...and is among the line's hottest this many. */
export const MAX_EXPRESSIONS = 3;

/** What a click in the editor reveals in the flame graph: a function, or one line of it. */
export interface RevealTarget {
  file: string;
  function: string;
  line?: number;
}

export class LineHeat implements vscode.Disposable {
  private model: ProfileModel | undefined;
  private instructions: InstructionHeat | undefined;
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
  /** The hottest expressions of a line: underlined, their share after them. */
  private readonly expressions: vscode.TextEditorDecorationType;
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
    this.expressions = vscode.window.createTextEditorDecorationType({
      textDecoration: 'underline dotted',
      after: { color: new vscode.ThemeColor('editorCodeLens.foreground'), margin: '0 0.3em 0 0.1em', fontStyle: 'italic' },
    });
    const d = this.disposables;
    d.push(...this.levels, this.waitingOnly, this.expressions, this.lenses);
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
    this.instructions = bodies === undefined ? undefined : InstructionHeat.of(bodies);
    // The page starts every run on all threads.
    this.thread = undefined;
    this.schedule();
  }

  add(body: ProfilingDataBody): void {
    if (this.model === undefined) return;
    this.model.addBatch(body);
    this.instructions?.add(body);
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

  /** The instruction figures of a line of a file, if the run has them (tests read them). */
  instructionsOf(doc: vscode.TextDocument, line: number): LineInstructions | undefined {
    const fh = this.fileOf(doc);
    return fh === undefined || !this.enabled ? undefined : this.instructions?.file(fh.file)?.get(line);
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
      const expressions: vscode.DecorationOptions[] = [];
      const byLine = fh === undefined || this.heat === undefined ? undefined : this.instructions?.file(fh.file);
      for (const [line, h] of fh?.lines ?? []) {
        if (line > editor.document.lineCount || (h.total <= 0 && h.waiting <= 0)) continue;
        const text = editor.document.lineAt(line - 1);
        const start = text.firstNonWhitespaceCharacterIndex;
        const figures = h.total > 0 ? `${heatText({ ...h, waiting: 0 }, n)} of ${n} samples${h.waiting > 0 ? ` · ${waitingText(h.waiting, ms)} (waiting tasks)` : ''}` : `${waitingText(h.waiting, ms)} (waiting tasks)`;
        const li = byLine?.get(line);
        const mix = li !== undefined && li.total > 0 ? `\n\nInstructions (all threads): ${mixText(li)}` : '';
        const hover = new vscode.MarkdownString(`**dapprof** · ${h.function}: ${figures}${mix}\n\n[Show in flame graph](${revealUri({ file: fh!.file, function: h.function, line })})`);
        hover.isTrusted = true;
        if (li !== undefined) expressions.push(...expressionDecorations(editor.document, line, li));
        (h.total > 0 ? byLevel[heatLevel(h.total, n, LEVELS) - 1] : waiting).push({
          range: new vscode.Range(line - 1, start, line - 1, text.range.end.character),
          hoverMessage: hover,
          renderOptions: { after: { contentText: heatText(h, n, ms) } },
        });
      }
      this.levels.forEach((type, i) => editor.setDecorations(type, byLevel[i]));
      editor.setDecorations(this.waitingOnly, waiting);
      editor.setDecorations(this.expressions, expressions);
    }
  }
}

/** "BINARY_OP_MULTIPLY_INT 40% · LOAD_FAST 12% · … (specialised 45% of the line)". */
function mixText(li: LineInstructions): string {
  const specialised = li.specialised > 0 ? ` (specialised: ${percent(li.specialised, li.total)} of the line)` : '';
  return `${opcodeMix(li.opcodes, li.total)}${specialised}`;
}

/**
 * The underlines of a line's hottest expressions: single-line ones (a range over lines is a
 * statement's) short of the whole line.
 */
function expressionDecorations(doc: vscode.TextDocument, line: number, li: LineInstructions): vscode.DecorationOptions[] {
  const text = doc.lineAt(line - 1).text;
  const first = text.length - text.trimStart().length, last = text.trimEnd().length;
  const out: vscode.DecorationOptions[] = [];
  for (const e of li.expressions) {
    if (out.length >= MAX_EXPRESSIONS || e.total < MIN_EXPRESSION_SHARE * li.total) break;
    if (e.line !== line || e.endLine !== line) continue;
    const start = utf16Column(text, e.column), end = utf16Column(text, e.endColumn);
    // A range over the whole line says no more than the line's own heat.
    if (end <= start || (start <= first && end >= last)) continue;
    const share = percent(e.total, li.total);
    const hover = new vscode.MarkdownString(`**dapprof** · ${share} of this line's samples (all threads): ${escapeMarkdown(text.slice(start, end))}\n\n${opcodeMix(e.opcodes, e.total)}`);
    out.push({ range: new vscode.Range(line - 1, start, line - 1, end), hoverMessage: hover, renderOptions: { after: { contentText: share } } });
  }
  return out;
}

/** Source text shown as itself in a hover. */
function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>~]/g, '\\$&');
}

/** A command link of a hover: reveals the target in the flame graph. */
export function revealUri(target: RevealTarget): string {
  return `command:dapprof.revealInFlameGraph?${encodeURIComponent(JSON.stringify([target]))}`;
}
