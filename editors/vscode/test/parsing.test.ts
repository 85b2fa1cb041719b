// Untrusted input: event lines, byte streams split anywhere, SSE framing, settings.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { DEFAULT_SETTINGS, enginePathFor, exitCodeFor, modelArgs, pickedArgs, simulateArgs, taskArgs } from '../src/build_args';
import { describeExit } from '../src/cli_source';
import { LineSplitter, parseEvent } from '../src/events';
import { optionsForService } from '../src/remote_source';
import { SseMessage, SseParser } from '../src/sse';

const STEP = '{"id":2,"phase":"Timing graph nodes","seq":5,"step":4,"t":0.021,"total":23,"type":"step","v":1}';

test('parseEvent accepts a v1 event and names what is wrong with others', () => {
  const ok = parseEvent(STEP);
  assert.ok(ok.ok && ok.event.type === 'step' && ok.event.step === 4);
  const bad: [string, RegExp][] = [
    ['not json', /not JSON/],
    ['[1,2]', /not an object/],
    [STEP.replace('"v":1', '"v":2'), /protocol version 2/],
    [STEP.replace('"seq":5,', ''), /missing "seq"/],
    [STEP.replace('"seq":5', '"seq":0'), /"seq"/],
    [STEP.replace('"step":4', '"step":"4"'), /"step"/],
    [STEP.replace('"type":"step"', '"type":"launch"'), /unknown event type "launch"/],
    ['{"v":1,"seq":9,"t":1,"type":"build_finish","status":"exploded","error":null,"elapsed":1,"cancel_latency":null,"phases":[]}', /"status"/],
    ['{"v":1,"seq":2,"t":0,"type":"phase_start","id":1,"parent":"x","phase":"p","total":1}', /"parent"/],
  ];
  for (const [line, why] of bad) {
    const r = parseEvent(line);
    assert.ok(!r.ok, line);
    assert.match(r.error, why);
  }
});

test('parseEvent reads the history\'s estimate, with a range or with none yet', () => {
  const estimate = (remaining: string) =>
    `{"v":1,"seq":7,"t":2,"type":"estimate","remaining":${remaining},"based_on":{"builds":4,"match":"exact"},"longer_than_history":false}`;
  const ranged = parseEvent(estimate('{"p10":20,"p50":30,"p90":45}'));
  assert.ok(ranged.ok && ranged.event.type === 'estimate');
  assert.deepEqual(ranged.event.remaining, { p10: 20, p50: 30, p90: 45 });
  assert.deepEqual(ranged.event.based_on, { builds: 4, match: 'exact' });
  const none = parseEvent(estimate('null'));
  assert.ok(none.ok && none.event.type === 'estimate' && none.event.remaining === null);
  const bad = parseEvent(estimate('{"p10":"soon","p50":30,"p90":45}'));
  assert.ok(!bad.ok);
  assert.match(bad.error, /"p10"/);
});

test('parseEvent reads the build key and the engine cache\'s answer, and refuses malformed ones', () => {
  const key = 'ab'.repeat(32);
  const finish = (extra: string) =>
    `{"v":1,"seq":2,"t":0.1,"type":"build_finish","status":"succeeded","error":null,"elapsed":0.1,"cancel_latency":null,"phases":[]${extra}}`;
  const hit = parseEvent(finish(`,"key":"${key}","cache":"hit","cache_age_seconds":259200,"cache_built_seconds":842`));
  assert.ok(hit.ok && hit.event.type === 'build_finish');
  assert.equal(hit.event.key, key);
  assert.equal(hit.event.cache, 'hit');
  assert.equal(hit.event.cache_age_seconds, 259200);
  assert.equal(hit.event.cache_built_seconds, 842);
  const start = parseEvent(`{"v":1,"seq":1,"t":0,"type":"build_start","build":"b","backend":"tensorrt","model":"m.onnx","facts":{},"key":"${key}","cache":"miss"}`);
  assert.ok(start.ok && start.event.type === 'build_start' && start.event.cache === 'miss' && start.event.key === key);
  const plain = parseEvent(finish(''));
  assert.ok(plain.ok && plain.event.type === 'build_finish');
  assert.equal(plain.event.cache, undefined, 'a stream without a cache reads as before');
  for (const [extra, why] of [
    [',"cache":"maybe"', /"cache" "maybe" is not hit or miss/],
    [',"key":"ABC"', /"key" is not 64 lowercase hex digits/],
    [',"cache":"hit","cache_age_seconds":-1', /"cache_age_seconds" is not a number >= 0/],
    [',"cache":"hit","cache_built_seconds":"14m"', /"cache_built_seconds"/],
  ] as const) {
    const r = parseEvent(finish(extra));
    assert.ok(!r.ok, extra);
    assert.match(r.error, why);
  }
});

test('parseEvent reads a phase summary\'s self time, and takes the total where an older log has none', () => {
  const finish = (entry: string) =>
    `{"v":1,"seq":9,"t":3,"type":"build_finish","status":"succeeded","error":null,"elapsed":3,"cancel_latency":null,"phases":[${entry}]}`;
  const now = parseEvent(finish('{"phase":"Building engine","count":1,"early":0,"seconds":3,"self":0.5}'));
  assert.ok(now.ok && now.event.type === 'build_finish');
  assert.equal(now.event.phases[0].self, 0.5);
  const old = parseEvent(finish('{"phase":"Building engine","count":1,"early":0,"seconds":3}'));
  assert.ok(old.ok && old.event.type === 'build_finish');
  assert.equal(old.event.phases[0].self, 3);
  assert.ok(!parseEvent(finish('{"phase":"p","count":1,"early":0,"seconds":3,"self":-1}')).ok);
});

test('parseEvent never throws, whatever the bytes', () => {
  let seed = 12345;
  const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  for (let i = 0; i < 2000; i++) {
    const chars = Array.from(STEP);
    for (let k = 0; k < 1 + Math.floor(rand() * 4); k++) {
      chars[Math.floor(rand() * chars.length)] = String.fromCharCode(Math.floor(rand() * 128));
    }
    const r = parseEvent(chars.join(''));
    assert.equal(typeof r.ok, 'boolean');
  }
});

test('LineSplitter joins a UTF-8 character split across chunks and drops \\r', () => {
  const lines: string[] = [];
  const s = new LineSplitter((l) => lines.push(l));
  const bytes = Buffer.from('Évaluation › ok\r\nsecond\nthird', 'utf8');
  for (let i = 0; i < bytes.length; i++) s.push(bytes.subarray(i, i + 1));
  s.end();
  assert.deepEqual(lines, ['Évaluation › ok', 'second', 'third']);
});

test('SseParser: ids, event names, multi-line data, comments, CRLF, any split', () => {
  const text = 'retry: 2000\r\n\r\nid: 1\r\nevent: build_start\r\ndata: {"a":1}\r\n\r\n: heartbeat\n\nid: 2\ndata: one\ndata: two\n\n';
  for (let cut = 0; cut <= text.length; cut++) {
    const got: SseMessage[] = [];
    const p = new SseParser((m) => got.push(m));
    p.push(text.slice(0, cut));
    p.push(text.slice(cut));
    assert.deepEqual(got, [
      { id: '1', event: 'build_start', data: '{"a":1}' },
      { id: '2', event: 'message', data: 'one\ntwo' },
    ], `cut at ${cut}`);
  }
});

test('exit codes without a build_finish map to the README\'s meanings', () => {
  assert.equal(describeExit(0, null).status, 'succeeded');
  assert.equal(describeExit(1, null).status, 'failed');
  assert.equal(describeExit(2, null).unavailable, true);
  assert.equal(describeExit(124, null).status, 'timed_out');
  assert.equal(describeExit(130, null).status, 'cancelled');
  assert.match(describeExit(137, null).message ?? '', /--kill-after/);
  assert.equal(describeExit(143, null).status, 'cancelled');
  assert.match(describeExit(null, 'SIGKILL').message ?? '', /SIGKILL/);
  assert.match(describeExit(77, null).message ?? '', /code 77/);
});

test('settings become trtwatch build arguments', () => {
  const s = { ...DEFAULT_SETTINGS, timeout: '2h', killAfter: '30s', simulateSpeed: 4 };
  assert.deepEqual(simulateArgs('small-cnn', s), ['--simulate', 'small-cnn', '--speed', '4', '--timeout', '2h', '--kill-after', '30s']);
  assert.equal(enginePathFor('/m/resnet.ONNX'), '/m/resnet.engine');
  assert.deepEqual(pickedArgs(['--fp16', '--timing-cache'], '/m/a.onnx'), ['--fp16', '--timing-cache', '/m/a.cache']);
  assert.deepEqual(modelArgs('a.onnx', 'a.engine', ['--fp16'], DEFAULT_SETTINGS), ['a.onnx', '-o', 'a.engine', '--fp16']);
  assert.deepEqual(taskArgs({ type: 'trtwatch', model: 'm.onnx', options: ['--fp16'] }, DEFAULT_SETTINGS), ['m.onnx', '-o', 'm.engine', '--fp16']);
  assert.match(String(taskArgs({ type: 'trtwatch' }, DEFAULT_SETTINGS)), /needs "model"/);
  assert.match(String(taskArgs({ type: 'trtwatch', model: 'm.onnx', simulate: 'small-cnn' }, DEFAULT_SETTINGS)), /not both/);
});

test('options for the service are flags without dashes', () => {
  assert.deepEqual(optionsForService(['--fp16', '--memPoolSize=workspace:4G', '--builderOptimizationLevel', '3']),
                   { fp16: true, memPoolSize: 'workspace:4G', builderOptimizationLevel: '3' });
  assert.throws(() => optionsForService(['fp16']), /does not start with --/);
});

test('a task\'s failure line is what the $trtwatch problem matcher reads', () => {
  const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8'));
  const matcher = manifest.contributes.problemMatchers.find((m: { name: string }) => m.name === 'trtwatch');
  const re = new RegExp(matcher.pattern.regexp);
  const m = re.exec('models/resnet 50.onnx: error: Build failed after 2.3 s: Error Code 10: Internal Error (x: y)');
  assert.ok(m);
  assert.equal(m[matcher.pattern.file], 'models/resnet 50.onnx');
  assert.equal(m[matcher.pattern.severity], 'error');
  assert.equal(m[matcher.pattern.message], 'Build failed after 2.3 s: Error Code 10: Internal Error (x: y)');
  assert.deepEqual(['succeeded', 'failed', 'timed_out', 'cancelled'].map(exitCodeFor), [0, 1, 124, 130]);
});
