// Sub-line heat: which expressions of a line took its samples, and which bytecode instructions, from
// a run started with opcodes. The daemon counts the samples of each instruction (profilingData's
// newInstructions and instructionCounts: own at the innermost Python frame, total once per
// sample); this only adds the counts up by source line and by the instruction's source range.
//
// The counts are of every thread and every frame, the debugger's included: a view of the panel
// (a thread, "Hide debugger") does not narrow them. A line's share of an expression is of the
// samples at that line's instructions, so the shares of a line's expressions say where on the
// line its time goes, whatever the line's share of the run.

import type { Frame, Instruction, ProfilingDataBody } from './protocol';

/**
 * One opcode of a line, as executed. `specialized` is the daemon's word: `baseOpcode` is also set
 * for forms that stand for another without being specialised (3.11's adaptive ones, 3.12+'s
 * instrumented ones).
 */
export interface OpcodeHeat {
  opcode: string;
  baseOpcode?: string;
  specialized: boolean;
  total: number;
  own: number;
}

/** The samples at the instructions of one source range (an expression) of a line. */
export interface ExpressionHeat {
  /** 1-based lines; 0-based columns in UTF-8 bytes, the end exclusive, as CPython gives them. */
  line: number;
  endLine: number;
  column: number;
  endColumn: number;
  total: number;
  own: number;
  /** Its instructions, hottest first. */
  opcodes: OpcodeHeat[];
}

export interface LineInstructions {
  /** Samples at the line's instructions (the denominator of its shares). */
  total: number;
  own: number;
  /** Source ranges with samples, hottest first (none before CPython 3.11, which has no columns). */
  expressions: ExpressionHeat[];
  /** The line's opcodes, hottest first. */
  opcodes: OpcodeHeat[];
  /** Of total, the samples at specialised instructions (3.11+'s adaptive interpreter). */
  specialised: number;
}

interface Counted {
  def: Instruction;
  own: number;
  total: number;
}

export class InstructionHeat {
  private readonly frames = new Map<number, Pick<Frame, 'file' | 'line'>>();
  private readonly instructions = new Map<number, Counted>();
  /** file -> line -> its figures; rebuilt when counts change. */
  private byFile: Map<string, Map<number, LineInstructions>> | undefined;

  static of(bodies: readonly ProfilingDataBody[]): InstructionHeat {
    const h = new InstructionHeat();
    for (const b of bodies) h.add(b);
    return h;
  }

  /** No instruction was counted: the run was not started with opcodes. */
  get empty(): boolean {
    return this.instructions.size === 0;
  }

  add(body: ProfilingDataBody): void {
    for (const id in body.newFrames) {
      const f = body.newFrames[id];
      if (f.native !== true && f.file !== '') this.frames.set(Number(id), { file: f.file, line: f.line });
    }
    for (const id in body.newInstructions ?? {}) {
      if (!this.instructions.has(Number(id))) this.instructions.set(Number(id), { def: body.newInstructions![id], own: 0, total: 0 });
    }
    const c = body.instructionCounts;
    if (c === undefined || c.length === 0) return;
    for (let i = 0; i + 2 < c.length; i += 3) {
      const counted = this.instructions.get(c[i]);
      // An instruction never announced violates the protocol; its samples cannot be placed.
      if (counted === undefined) continue;
      counted.own += c[i + 1];
      counted.total += c[i + 2];
    }
    this.byFile = undefined;
  }

  /** The lines of a file (as the daemon names it) with samples at their instructions. */
  file(file: string): ReadonlyMap<number, LineInstructions> | undefined {
    return this.index().get(file);
  }

  private index(): Map<string, Map<number, LineInstructions>> {
    if (this.byFile !== undefined) return this.byFile;
    const byFile = new Map<string, Map<number, LineInstructions>>();
    const ranges = new Map<LineInstructions, Map<string, ExpressionHeat>>();
    const opcodes = new Map<LineInstructions | ExpressionHeat, Map<string, OpcodeHeat>>();
    for (const { def, own, total } of this.instructions.values()) {
      if (total === 0 && own === 0) continue;
      const frame = this.frames.get(def.frame);
      if (frame === undefined || frame.line <= 0) continue;
      let lines = byFile.get(frame.file);
      if (lines === undefined) byFile.set(frame.file, (lines = new Map()));
      let li = lines.get(frame.line);
      if (li === undefined) lines.set(frame.line, (li = { total: 0, own: 0, expressions: [], opcodes: [], specialised: 0 }));
      li.total += total;
      li.own += own;
      if (def.specialized === true) li.specialised += total;
      addOpcode(opcodes, li, def, own, total);
      if (def.column === undefined || def.endColumn === undefined) continue;
      const line = def.line ?? frame.line, endLine = def.endLine ?? line;
      const key = `${line}:${def.column}:${endLine}:${def.endColumn}`;
      let byRange = ranges.get(li);
      if (byRange === undefined) ranges.set(li, (byRange = new Map()));
      let e = byRange.get(key);
      if (e === undefined) {
        byRange.set(key, (e = { line, endLine, column: def.column, endColumn: def.endColumn, total: 0, own: 0, opcodes: [] }));
        li.expressions.push(e);
      }
      e.total += total;
      e.own += own;
      addOpcode(opcodes, e, def, own, total);
    }
    for (const [holder, byName] of opcodes) holder.opcodes = [...byName.values()].sort(hottest);
    for (const lines of byFile.values()) for (const li of lines.values()) li.expressions.sort(hottest);
    return (this.byFile = byFile);
  }
}

function addOpcode(into: Map<LineInstructions | ExpressionHeat, Map<string, OpcodeHeat>>, holder: LineInstructions | ExpressionHeat, def: Instruction, own: number, total: number): void {
  let byName = into.get(holder);
  if (byName === undefined) into.set(holder, (byName = new Map()));
  let o = byName.get(def.opcode);
  if (o === undefined) byName.set(def.opcode, (o = { opcode: def.opcode, ...(def.baseOpcode !== undefined ? { baseOpcode: def.baseOpcode } : {}), specialized: def.specialized === true, total: 0, own: 0 }));
  o.total += total;
  o.own += own;
}

function hottest(a: { total: number; own: number }, b: { total: number; own: number }): number {
  return b.total - a.total || b.own - a.own;
}

/** "BINARY_OP_MULTIPLY_INT 40% · LOAD_FAST 12% · …": a line's (or an expression's) instruction mix. */
export function opcodeMix(opcodes: readonly OpcodeHeat[], of: number, limit = 5): string {
  const parts = opcodes.slice(0, limit).map((o) => `${o.opcode} ${percent(o.total, of)}`);
  if (opcodes.length > limit) parts.push('…');
  return parts.join(' · ');
}

export function percent(n: number, of: number): string {
  return of > 0 ? `${Math.round((100 * n) / of)}%` : '0%';
}

/**
 * The UTF-16 column (VS Code's) of a UTF-8 byte column (CPython's) of a line's text; the line's
 * length when the byte column is past its end (the file changed since it ran).
 */
export function utf16Column(text: string, byteColumn: number): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    if (bytes >= byteColumn) return i;
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      bytes += 4; // a surrogate pair: one code point of 4 bytes, two UTF-16 units
      i++;
      if (bytes > byteColumn) return i - 1;
    } else bytes += 3;
  }
  return text.length;
}
