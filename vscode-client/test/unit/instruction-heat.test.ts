// Sub-line heat: the instruction counts of a run started with opcodes, added up per line and per
// source range (model/instruction-heat.ts), and the editor's underlines and hovers (line-heat.ts)
// through the controller with the VS Code API stubbed (a real extension host cannot run here; the
// end-to-end test in code-server runs the real one on a real run).
import { fake, FakeDocument, FakeEditor, makeSession, resetFake, startSession, Uri } from '../support/fake-vscode';
import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { ProfilingController } from '../../src/extension/controller';
import { startArgumentsFromSettings } from '../../src/extension/session';
import { LEVELS, MAX_EXPRESSIONS, THROTTLE_MS } from '../../src/extension/line-heat';
import { InstructionHeat, opcodeMix, utf16Column } from '../../src/model/instruction-heat';
import type { Instruction, ProfilingDataBody } from '../../src/model/protocol';

const FILE = '/src/hot.py';
const APP = ['def work(n):', '    total = 0', '    for i in range(n):', '        total = (total * 31 + i) % 1000003', '    return total', '', 'work(10**8)', ''].join('\n');
const HOT = 4;
const col = (text: string) => APP.split('\n')[HOT - 1].indexOf(text);

/**
 * An instruction of line 4 over `text` of it (columns as CPython gives them: bytes, ASCII here),
 * specialised where the daemon says so.
 */
function on(text: string, offset: number, opcode: string, kind: { baseOpcode?: string; specialized?: boolean } = {}, at = col(text)): Instruction {
  const c = at;
  assert.ok(c >= 0, text);
  return { frame: 1, offset, opcode, ...(kind.baseOpcode ? { baseOpcode: kind.baseOpcode } : {}), specialized: kind.specialized === true, line: HOT, endLine: HOT, column: c, endColumn: c + text.length };
}

const SPECIALISED = { baseOpcode: 'BINARY_OP', specialized: true };
const INSTRUCTIONS: Record<string, Instruction> = {
  '0': on('total * 31', 20, 'BINARY_OP_MULTIPLY_INT', SPECIALISED),
  '1': on('total * 31 + i', 24, 'BINARY_OP_ADD_INT', SPECIALISED),
  '2': on('(total * 31 + i) % 1000003', 28, 'BINARY_OP'),
  '3': on('total', 16, 'LOAD_FAST', {}, col('(total') + 1),
  '4': on('i', 22, 'LOAD_FAST'),
  '5': { frame: 2, offset: 8, opcode: 'CALL', specialized: false, line: 7, endLine: 7, column: 0, endColumn: 11 },
};

/** Two events: the instructions' counts as [id, own, total] triples, split across them. */
function stream(): ProfilingDataBody[] {
  const frames = { '1': { file: FILE, line: HOT, function: 'work' }, '2': { file: FILE, line: 7, function: '<module>' } };
  const base = { samples: [], sampleCount: 0, duration: 100, threadIds: [], threads: {} };
  return [
    { ...base, newFrames: frames, newInstructions: { '0': INSTRUCTIONS['0'], '2': INSTRUCTIONS['2'], '5': INSTRUCTIONS['5'] }, instructionCounts: [0, 20, 20, 2, 5, 5, 5, 0, 25] },
    { ...base, newFrames: {}, newInstructions: { '1': INSTRUCTIONS['1'], '3': INSTRUCTIONS['3'], '4': INSTRUCTIONS['4'] }, instructionCounts: [0, 20, 20, 1, 10, 10, 2, 6, 6, 3, 30, 30, 4, 9, 9, 5, 0, 75] },
  ];
}

test('counts add up per line and per source range across events, hottest first, with the instruction mix', () => {
  const heat = InstructionHeat.of(stream());
  const lines = heat.file(FILE)!;
  const hot = lines.get(HOT)!;
  assert.equal(hot.total, 40 + 10 + 11 + 30 + 9);
  assert.equal(hot.specialised, 50, 'the two BINARY_OP_*_INT');
  assert.deepEqual(
    hot.expressions.map((e) => [APP.split('\n')[HOT - 1].slice(e.column, e.endColumn), e.total]),
    [['total * 31', 40], ['total', 30], ['(total * 31 + i) % 1000003', 11], ['total * 31 + i', 10], ['i', 9]],
  );
  assert.equal(opcodeMix(hot.opcodes, hot.total), 'BINARY_OP_MULTIPLY_INT 40% · LOAD_FAST 39% · BINARY_OP 11% · BINARY_OP_ADD_INT 10%');
  assert.equal(lines.get(7)!.total, 100, 'the caller\'s CALL: total, not own');
  assert.equal(lines.get(7)!.own, 0);
  assert.equal(heat.file('/elsewhere.py'), undefined);
  assert.ok(InstructionHeat.of([{ ...stream()[0], newInstructions: undefined, instructionCounts: undefined }]).empty);
});

test('only what the daemon calls specialised counts as such, not every form with a base', () => {
  // CPython 3.11's adaptive form (not specialised yet) and 3.12+'s instrumented one stand for
  // BINARY_OP as BINARY_OP_MULTIPLY_INT does.
  const frames = { '1': { file: FILE, line: HOT, function: 'work' } };
  const body: ProfilingDataBody = {
    samples: [], sampleCount: 0, duration: 100, threadIds: [], threads: {}, newFrames: frames,
    newInstructions: {
      '0': on('total * 31', 20, 'BINARY_OP_ADAPTIVE', { baseOpcode: 'BINARY_OP', specialized: false }),
      '1': on('total * 31 + i', 24, 'INSTRUMENTED_INSTRUCTION', { baseOpcode: 'BINARY_OP', specialized: false }),
      '2': on('(total * 31 + i) % 1000003', 28, 'BINARY_OP_MULTIPLY_INT', SPECIALISED),
    },
    instructionCounts: [0, 6, 6, 1, 3, 3, 2, 1, 1],
  };
  const hot = InstructionHeat.of([body]).file(FILE)!.get(HOT)!;
  assert.equal(hot.total, 10);
  assert.equal(hot.specialised, 1, 'BINARY_OP_MULTIPLY_INT alone');
  assert.deepEqual(hot.opcodes.map((o) => [o.opcode, o.baseOpcode, o.specialized]), [
    ['BINARY_OP_ADAPTIVE', 'BINARY_OP', false],
    ['INSTRUMENTED_INSTRUCTION', 'BINARY_OP', false],
    ['BINARY_OP_MULTIPLY_INT', 'BINARY_OP', true],
  ]);
});

test('CPython\'s UTF-8 byte columns become VS Code\'s UTF-16 ones', () => {
  assert.equal(utf16Column('x = 1', 4), 4);
  assert.equal(utf16Column('é = f(x)', 3), 2, 'é is 2 bytes, 1 unit');
  assert.equal(utf16Column('s = "€" + t', 12), 10, '€ is 3 bytes, 1 unit');
  assert.equal(utf16Column('s = "😀" + t', 11), 9, '😀 is 4 bytes, 2 units');
  assert.equal(utf16Column('short', 99), 5, 'past the end: the end');
});

test('the setting asks the daemon for opcodes, and only then', () => {
  const cfg = (values: Record<string, unknown>) => ({ get: (k: string, d: unknown) => (k in values ? values[k] : d) }) as never;
  assert.equal(startArgumentsFromSettings(cfg({})).opcodes, undefined);
  assert.equal(startArgumentsFromSettings(cfg({ opcodes: true })).opcodes, true);
});

let controller: ProfilingController;
beforeEach(() => {
  controller?.dispose();
  resetFake();
  controller = new ProfilingController(Uri.file('/ext') as never);
});
afterEach(() => controller?.dispose());

test('the editor underlines a line\'s hottest expressions with their share, and the line\'s hover gives its instruction mix', async () => {
  const s = makeSession('s1');
  s.answer = (command) => (command === 'startProfiling' ? { pid: 4242, pythonVersion: '3.12.1', rate: 100 } : {});
  startSession(s, true);
  assert.ok(await controller.startProfiling(s as never));
  // The line heat needs samples on the lines: one stack per instruction's total is enough here.
  const bodies = stream();
  bodies[1] = { ...bodies[1], samples: Array.from({ length: 100 }, () => [2, 1]), threadIds: Array(100).fill(7), sampleCount: 100, threads: { '7': { name: 'MainThread', osThreadId: 7 } } };
  for (const body of bodies) fake.onCustomEvent.fire({ session: s, event: 'profilingData', body });
  const editor = new FakeEditor(new FakeDocument(FILE, APP));
  fake.visibleTextEditors = [editor];
  fake.onVisibleEditorsChanged.fire([editor]);
  await new Promise((r) => setTimeout(r, THROTTLE_MS + 50));

  const expressionType = fake.decorationTypes[LEVELS + 1];
  assert.match(String((expressionType.options as { textDecoration: string }).textDecoration), /underline/);
  const underlined = editor.decorations.get(expressionType.id) ?? [];
  const text = APP.split('\n')[HOT - 1];
  assert.deepEqual(
    underlined.map((d) => [d.range.start.line + 1, text.slice(d.range.start.character, d.range.end.character), d.renderOptions?.after?.contentText]),
    [[HOT, 'total * 31', '40%'], [HOT, 'total', '30%'], [HOT, '(total * 31 + i) % 1000003', '11%']].slice(0, MAX_EXPRESSIONS),
  );
  assert.match(underlined[0].hoverMessage!.value, /40% of this line's samples \(all threads\): total \\\* 31/);
  assert.match(underlined[0].hoverMessage!.value, /BINARY_OP_MULTIPLY_INT 100%/);
  const lineHover = [...editor.decorations.values()].flat().find((d) => d.range.start.line === HOT - 1 && d.hoverMessage!.value.includes('Instructions'))!;
  assert.match(lineHover.hoverMessage!.value, /Instructions \(all threads\): BINARY_OP_MULTIPLY_INT 40% · LOAD_FAST 39% · BINARY_OP 11% · BINARY_OP_ADD_INT 10% \(specialised: 50% of the line\)/);
});
