// The messages the client sends and the streams it is tested with, validated against the
// protocol's JSON Schemas (schemas/*.schema.json, draft 2020-12).
import '../support/fake-vscode'; // first: the controller module requires 'vscode'
import Ajv2020 from 'ajv/dist/2020';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startArgumentsFromSettings } from '../../src/extension/controller';
import { EXPORT_FORMATS } from '../../src/extension/export';
import { DEFAULT_FORMAT, PROFILE_FORMATS, ProfilingErrorId, START_DEFAULTS, START_RANGES } from '../../src/model/protocol';
import type { ProfilingDataBody } from '../../src/model/protocol';
import { clientRoot, readStream, repoRoot, toStacks } from '../support/reference';
import { randomStream } from '../support/streams';

const ajv = new Ajv2020({ allErrors: true, strict: true });
const schemaDir = join(repoRoot, 'schemas');
const schemas: Record<string, { properties?: Record<string, { minimum?: number; maximum?: number; default?: unknown }> }> = {};
for (const f of readdirSync(schemaDir).filter((f) => f.endsWith('.schema.json'))) {
  const s = JSON.parse(readFileSync(join(schemaDir, f), 'utf8'));
  ajv.addSchema(s);
  schemas[f.replace('.schema.json', '')] = s;
}
function validate(name: string, value: unknown): void {
  const v = ajv.getSchema(`urn:dapprof:protocol:v1:${name}`);
  assert.ok(v, `schema ${name}`);
  assert.ok(v(value), `${name}: ${ajv.errorsText(v.errors)}\n${JSON.stringify(value).slice(0, 300)}`);
}
/** The constraints docs/PROFILING.md states beyond the schema. */
function checkStream(bodies: ProfilingDataBody[]): void {
  const defined = new Set<string>();
  const stacks = new Set<string>();
  for (const b of bodies) {
    validate('profilingData', b);
    if (b.stackIds) {
      // With stacks: runs of stack IDs, each stack announced once, before or with its first use.
      assert.equal(b.samples.length, 0);
      assert.equal(b.stackCounts!.length, b.stackIds.length);
      assert.equal(b.sampleCount, b.stackCounts!.reduce((a, c) => a + c, 0));
      if (b.threadIds) assert.equal(b.threadIds.length, b.stackIds.length);
    } else {
      assert.equal(b.sampleCount, b.samples.length);
      if (b.threadIds) assert.equal(b.threadIds.length, b.samples.length);
    }
    for (const id of Object.keys(b.newFrames)) {
      assert.ok(!defined.has(id), `frame ${id} announced twice`);
      defined.add(id);
    }
    for (const [id, s] of Object.entries(b.newStacks ?? {})) {
      assert.ok(!stacks.has(id), `stack ${id} announced twice`);
      stacks.add(id);
      for (const f of s) assert.ok(defined.has(String(f)), `frame ${f} of stack ${id} used before it is announced`);
    }
    for (const id of b.stackIds ?? []) assert.ok(stacks.has(String(id)), `stack ${id} used before it is announced`);
    for (const s of b.samples) for (const id of s) assert.ok(defined.has(String(id)), `frame ${id} used before it is announced`);
  }
}

test('every schema of the protocol compiles', () => {
  assert.deepEqual(Object.keys(schemas).sort(), [
    'asyncTasksArguments',
    'asyncTasksResponse',
    'exportProfileArguments',
    'exportProfileResponse',
    'profilingData',
    'profilingErrorResponse',
    'profilingStopped',
    'startProfilingArguments',
    'startProfilingResponse',
    'stopProfilingArguments',
    'stopProfilingResponse',
  ]);
});

test("the task document the asyncio Tasks view's tests read is a valid asyncTasks answer", () => {
  const document = JSON.parse(readFileSync(join(clientRoot, 'test/fixtures/async-tasks-taskgroup.json'), 'utf8'));
  validate('asyncTasksResponse', document);
  assert.equal(document.tasks.length, 11);
});

test('the fixture streams and the random test streams are valid profilingData bodies', () => {
  checkStream(readStream('synthetic-stream.jsonl'));
  checkStream(readStream('encoder-stream.jsonl'));
  checkStream(readStream('live-stream.jsonl'));
  checkStream(readStream('encoder-stacks-stream.jsonl'));
  checkStream(readStream('live-stacks-stream.jsonl'));
  checkStream(toStacks(readStream('live-stream.jsonl')));
  for (const seed of [1, 2, 3]) checkStream(randomStream(seed, 20));
  checkStream(randomStream(5, 20, { withThreads: false }));
});

test('the validator rejects what the protocol forbids', () => {
  const v = ajv.getSchema('urn:dapprof:protocol:v1:profilingData')!;
  const ok: ProfilingDataBody = { newFrames: { '1': { file: 'a.py', line: 1, function: 'f' } }, samples: [[1]], sampleCount: 1, duration: 1 };
  assert.ok(v(ok));
  assert.ok(!v({ ...ok, samples: [[2 ** 53]] }), 'frame ID above 2^53 - 1');
  assert.ok(!v({ ...ok, newFrames: { '01': ok.newFrames['1'] } }), 'non-canonical decimal ID');
  assert.ok(!v({ ...ok, newFrames: { '1': { file: 'a.py', line: -1, function: 'f' } } }), 'negative line');
  assert.ok(!v({ samples: [], sampleCount: 0, duration: 0 }), 'newFrames missing');
});

test('startProfiling arguments built from the settings are valid, and the settings ranges match the schema', () => {
  const pkg = JSON.parse(readFileSync(join(clientRoot, 'package.json'), 'utf8'));
  const props = pkg.contributes.configuration.properties;
  const settings = (values: Record<string, unknown>) => ({ get: <T>(k: string, d: T) => (values[k] === undefined ? d : (values[k] as T)) });
  const defaults: Record<string, unknown> = {};
  for (const [k, p] of Object.entries<{ default: unknown }>(props)) if (k.startsWith('dapprof.profiling.')) defaults[k.slice('dapprof.profiling.'.length)] = p.default;
  validate('startProfilingArguments', startArgumentsFromSettings(settings(defaults) as never));
  const schema = schemas.startProfilingArguments.properties!;
  for (const k of ['rate', 'batchIntervalMs']) {
    const p = props[`dapprof.profiling.${k}`];
    assert.equal(p.minimum, schema[k].minimum, `${k} minimum`);
    assert.equal(p.maximum, schema[k].maximum, `${k} maximum`);
    validate('startProfilingArguments', startArgumentsFromSettings(settings({ ...defaults, [k]: p.minimum }) as never));
    validate('startProfilingArguments', startArgumentsFromSettings(settings({ ...defaults, [k]: p.maximum }) as never));
  }
  validate('startProfilingArguments', startArgumentsFromSettings(settings({ native: true, idle: true, gil: true, subprocesses: true }) as never));
  // The async setting offers the schema's modes, with its default, and sends the one chosen.
  const asyncSetting = props['dapprof.profiling.async'];
  assert.deepEqual(asyncSetting.enum, (schema.async as { enum?: string[] }).enum);
  assert.equal(asyncSetting.default, schema.async.default);
  assert.equal(asyncSetting.enumDescriptions.length, asyncSetting.enum.length);
  for (const mode of asyncSetting.enum) {
    const args = startArgumentsFromSettings(settings({ ...defaults, async: mode }) as never);
    assert.equal(args.async, mode);
    validate('startProfilingArguments', args);
  }
  assert.equal(startArgumentsFromSettings(settings({ async: 'sometimes' }) as never).async, 'off');
  // The mode setting offers the schema's modes, with its default; a mode other than "active" is
  // sent instead of the older idle/gil switches (the daemon refuses a conflicting pair), which
  // are sent as they are otherwise.
  const modeSetting = props['dapprof.profiling.mode'];
  assert.deepEqual(modeSetting.enum, (schema.mode as { enum?: string[] }).enum);
  assert.equal(modeSetting.default, schema.mode.default);
  assert.equal(modeSetting.enumDescriptions.length, modeSetting.enum.length);
  for (const mode of modeSetting.enum.filter((m: string) => m !== 'active')) {
    const args = startArgumentsFromSettings(settings({ ...defaults, mode, idle: true, gil: true }) as never);
    assert.equal(args.mode, mode);
    assert.equal(args.idle, undefined);
    assert.equal(args.gil, undefined);
    validate('startProfilingArguments', args);
  }
  const older = startArgumentsFromSettings(settings({ ...defaults, idle: true }) as never);
  assert.deepEqual([older.mode, older.idle, older.gil], [undefined, true, false]);
  assert.equal(startArgumentsFromSettings(settings({ mode: 'sometimes', gil: true }) as never).gil, true);
  validate('stopProfilingArguments', {});
});

test('protocol.ts is the one generated from the schemas (tools/protocol/generate.py --check)', (t) => {
  const run = spawnSync('python3', [join(repoRoot, 'tools', 'protocol', 'generate.py'), '--check'], { encoding: 'utf8' });
  if (run.error) return t.skip(`python3 is not available: ${run.error.message}`);
  assert.equal(run.status, 0, run.stdout + run.stderr);
});

test('the generated constants are the schemas\' values', () => {
  const errorSchema = JSON.parse(readFileSync(join(schemaDir, 'profilingErrorResponse.schema.json'), 'utf8'));
  const ids = errorSchema.properties.body.properties.error.properties.id.oneOf as { const: number; title: string }[];
  assert.deepEqual(ProfilingErrorId, Object.fromEntries(ids.map((o) => [o.title, o.const])));
  assert.equal(ProfilingErrorId.NoSuchProcess, 2008);
  const stop = schemas.stopProfilingArguments.properties as Record<string, { enum?: string[]; default?: unknown }>;
  assert.deepEqual([...PROFILE_FORMATS], stop.format.enum);
  assert.equal(DEFAULT_FORMAT, stop.format.default);
  const start = schemas.startProfilingArguments.properties!;
  for (const [k, v] of Object.entries(START_DEFAULTS)) assert.equal(v, start[k].default, k);
  for (const [k, r] of Object.entries(START_RANGES)) assert.deepEqual([r.minimum, r.maximum], [start[k].minimum, start[k].maximum], k);
  validate('startProfilingArguments', START_DEFAULTS);
});

test('the stop and export arguments the extension sends are valid, and it offers every export format', () => {
  for (const hideDebugger of [false, true]) {
    validate('stopProfilingArguments', { hideDebugger });
    for (const { format } of EXPORT_FORMATS) validate('exportProfileArguments', { format, hideDebugger });
  }
  const formats = (schemas.exportProfileArguments.properties as Record<string, { enum?: string[] }>).format.enum;
  assert.deepEqual(EXPORT_FORMATS.map((f) => f.format), formats);
});
