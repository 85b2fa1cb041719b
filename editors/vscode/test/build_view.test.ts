// The event -> view mapping on streams recorded from the real CLI by
// scripts/record_streams.sh into TRTWATCH_RECORDINGS (scripts/ci.sh does both).

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import {
  BuildView, PATH_SEPARATOR, PhaseNode, describePhase, estimateText, formatAge, formatSeconds, notificationText, progressMessage,
  rangeText, statusBarText, statusTooltip,
} from '../src/build_view';
import { EstimateEvent, PhaseStartEvent, TrtEvent, parseEvent } from '../src/events';

const RECORDINGS = process.env.TRTWATCH_RECORDINGS ?? '';
if (!RECORDINGS) throw new Error('set TRTWATCH_RECORDINGS to the folder scripts/record_streams.sh wrote (scripts/ci.sh does)');

function load(name: string): TrtEvent[] {
  const text = fs.readFileSync(path.join(RECORDINGS, `${name}.jsonl`), 'utf8');
  return text.split('\n').filter((l) => l !== '').map((line) => {
    const r = parseEvent(line);
    assert.ok(r.ok, `${name}: ${r.ok ? '' : r.error}`);
    return r.event;
  });
}

interface Replay {
  view: BuildView;
  messages: string[];
  percents: number[];
  states: string[];
}

function replay(events: TrtEvent[]): Replay {
  const view = new BuildView();
  const r: Replay = { view, messages: [], percents: [], states: [] };
  for (const e of events) {
    view.apply(e);
    r.messages.push(view.message());
    r.percents.push(view.percent);
    if (r.states[r.states.length - 1] !== view.state) r.states.push(view.state);
  }
  assert.deepEqual(view.ignored, [], 'every event of a real stream has its place in the view');
  return r;
}

function allNodes(view: BuildView): PhaseNode[] {
  const out: PhaseNode[] = [];
  const walk = (n: PhaseNode) => { out.push(n); n.children.forEach(walk); };
  view.roots.forEach(walk);
  return out;
}

// The tree's shape is the stream's: each phase_start's parent id is the node's parent.
function assertTreeMatches(events: TrtEvent[], view: BuildView): void {
  const starts = events.filter((e): e is PhaseStartEvent => e.type === 'phase_start');
  const nodes = new Map(allNodes(view).map((n) => [n.id, n]));
  assert.equal(nodes.size, starts.length);
  for (const s of starts) {
    const node = nodes.get(s.id);
    assert.ok(node, `phase ${s.id} is in the tree`);
    assert.equal(node.name, s.phase);
    assert.equal(node.parent?.id ?? null, s.parent);
  }
}

function nonDecreasing(xs: number[]): boolean {
  return xs.every((x, i) => i === 0 || x >= xs[i - 1]);
}

test('small-cnn: running then succeeded, the phase path while it runs, 100 % at the end', () => {
  const events = load('small-cnn');
  const r = replay(events);
  assert.deepEqual(r.states, ['running', 'succeeded']);
  assertTreeMatches(events, r.view);
  assert.equal(r.view.roots[0].name, 'Building engine');
  assert.ok(r.messages.some((m) => /^Building engine \d+\/\d+ \u203a \S/.test(m)), 'a nested path like "Building engine 2/6 › Timing graph nodes 47/83"');
  assert.ok(nonDecreasing(r.percents), 'the notification never goes back');
  assert.equal(r.percents[r.percents.length - 1], 100);
  assert.ok(allNodes(r.view).every((n) => !n.active && !n.early));
  assert.equal(r.view.message(), '', 'nothing active once finished');
  assert.equal(r.view.describe(), 'SIMULATED build of small-cnn');
  const summary = r.view.summaryLines();
  assert.match(summary[0], /^Build succeeded after /);
  assert.ok(summary.some((l) => l.includes('Building engine')));
});

test('large-transformer: deep nesting, one name at two depths, counts within totals', () => {
  const events = load('large-transformer');
  const r = replay(events);
  assert.equal(r.view.state, 'succeeded');
  assertTreeMatches(events, r.view);
  const nodes = allNodes(r.view);
  assert.ok(Math.max(...nodes.map((n) => n.depth)) >= 3, 'nested at least four deep');
  const depthsByName = new Map<string, Set<number>>();
  for (const n of nodes) depthsByName.set(n.name, (depthsByName.get(n.name) ?? new Set()).add(n.depth));
  assert.ok([...depthsByName.values()].some((d) => d.size >= 2), 'a phase name used at two depths stays two nodes');
  const deepest = Math.max(...r.messages.map((m) => m.split(PATH_SEPARATOR).length));
  assert.ok(deepest >= 3, `the path shows nested phases (deepest ${deepest})`);
  for (const m of r.messages) {
    for (const part of m.split(PATH_SEPARATOR)) {
      const count = /(\d+)\/(\d+)$/.exec(part);
      if (count) assert.ok(Number(count[1]) <= Number(count[2]), `${part}: done <= total`);
    }
  }
  assert.ok(nonDecreasing(r.percents));
  assert.equal(r.percents[r.percents.length - 1], 100);
});

test('failing: failed with TensorRT\'s error in the summary', () => {
  const r = replay(load('failing'));
  assert.deepEqual(r.states, ['running', 'failed']);
  const error = r.view.finish?.error;
  assert.ok(error && error.length > 0);
  assert.ok(r.view.summaryLines().some((l) => l === `error: ${error}`));
  assert.match(r.view.summaryLines()[0], /^Build failed after /);
});

test('cancelled (SIGINT): cancelling, then cancelled with phases stopped early and the cancel latency', () => {
  const r = replay(load('cancelled'));
  assert.deepEqual(r.states, ['running', 'cancelling', 'cancelled']);
  assert.equal(r.view.cancelReason, 'signal');
  assert.ok(allNodes(r.view).some((n) => n.early), 'the interrupted phases finished early');
  assert.ok(r.view.finish?.cancel_latency);
  const summary = r.view.summaryLines();
  assert.match(summary[0], /^Build cancelled after /);
  assert.ok(summary.some((l) => l.startsWith('cancel latency: ')));
  assert.ok(r.view.percent < 100 && r.view.roots[0].early, 'the top-level phase stopped early');
});

test('timed out: a timeout cancel, then timed_out, distinct from cancelled', () => {
  const r = replay(load('timed-out'));
  assert.deepEqual(r.states, ['running', 'cancelling', 'timed_out']);
  assert.equal(r.view.cancelReason, 'timeout');
  assert.match(r.view.summaryLines()[0], /^Build timed out after /);
  assert.match(r.view.finish?.error ?? '', /--timeout/);
});

test('elapsed and silence follow build time', () => {
  const view = new BuildView();
  view.apply({ v: 1, seq: 1, t: 0, type: 'build_start', build: 'b', backend: 'simulated', model: 'simulated:x', facts: {} });
  view.apply({ v: 1, seq: 2, t: 1, type: 'phase_start', id: 1, parent: null, phase: 'Building engine', total: 4 });
  view.apply({ v: 1, seq: 3, t: 2, type: 'phase_start', id: 2, parent: 1, phase: 'Timing graph nodes', total: 10 });
  view.apply({ v: 1, seq: 4, t: 3, type: 'step', id: 2, phase: 'Timing graph nodes', step: 4, total: 10 });
  assert.equal(view.message(), 'Building engine 0/4 \u203a Timing graph nodes 5/10');
  assert.equal(view.topLevelPercent(), 12.5, 'half of the first of four steps');
  assert.equal(view.silentFor(45), 42);
  assert.equal(view.roots[0].elapsedAt(45), 44);
  // A replayed (older) event after a reconnect changes nothing.
  view.apply({ v: 1, seq: 3, t: 2, type: 'step', id: 2, phase: 'Timing graph nodes', step: 0, total: 10 });
  assert.equal(view.roots[0].children[0].done, 5);
  assert.equal(view.ignored.length, 1);
});

test('formatSeconds matches the terminal view\'s style', () => {
  assert.equal(formatSeconds(0.04), '0.0 s');
  assert.equal(formatSeconds(12.34), '12.3 s');
  assert.equal(formatSeconds(245), '4m 05s');
  assert.equal(formatSeconds(3720), '1h 02m');
  assert.equal(formatSeconds(-1), '0.0 s');
});

test('text for notifications cannot form a (command) link or carry control characters', () => {
  assert.equal(notificationText('Error [run](command:workbench.action.terminal.sendSequence) \u001b[2J\tx'),
               'Error [run] (command:workbench.action.terminal.sendSequence) ?[2J?x');
  assert.equal(notificationText('Building engine 2/6 \u203a Timing'), 'Building engine 2/6 \u203a Timing');
});

test('status bar: build time, then "last activity N s ago" after 3 s of silence; tree rows: per-phase elapsed', () => {
  const view = new BuildView();
  view.apply({ v: 1, seq: 1, t: 0, type: 'build_start', build: 'b_1', backend: 'tensorrt', model: 'm.onnx', facts: {} });
  view.apply({ v: 1, seq: 2, t: 0.5, type: 'phase_start', id: 1, parent: null, phase: 'Building engine', total: 6 });
  view.apply({ v: 1, seq: 3, t: 1, type: 'phase_start', id: 2, parent: 1, phase: 'Timing graph nodes', total: 83 });
  assert.equal(statusBarText(view, 'running', 1), '$(sync~spin) TensorRT 1.0 s');
  assert.equal(statusBarText(view, 'running', 3), '$(sync~spin) TensorRT 3.0 s', '2 s of silence: not yet worth mentioning');
  assert.equal(statusBarText(view, 'running', 43), '$(sync~spin) TensorRT 43.0 s \u00b7 last activity 42 s ago');
  assert.equal(statusBarText(view, 'cancelling', 43), '$(loading~spin) TensorRT 43.0 s \u00b7 cancelling \u00b7 last activity 42 s ago');
  assert.equal(describePhase(view.roots[0], 43), '0/6 \u00b7 42.5 s');
  assert.equal(describePhase(view.roots[0].children[0], 43), '0/83 \u00b7 42.0 s');
  view.apply({ v: 1, seq: 4, t: 44, type: 'stall', silent_for: 43 });
  assert.match(statusBarText(view, 'running', 44), /last activity 43 s ago$/, 'a stall is said at once');
});

// A running build at t = 10, its phase just started, with the history's estimate of that moment.
function runningWith(estimate: Partial<EstimateEvent>): BuildView {
  const view = new BuildView();
  view.apply({ v: 1, seq: 1, t: 0, type: 'build_start', build: 'b_1', backend: 'tensorrt', model: 'm.onnx', facts: {} });
  view.apply({ v: 1, seq: 2, t: 9.5, type: 'phase_start', id: 1, parent: null, phase: 'Building engine', total: 6 });
  view.apply({ v: 1, seq: 3, t: 10, type: 'estimate', remaining: { p10: 240, p50: 300, p90: 360 },
               based_on: { builds: 7, match: 'exact' }, longer_than_history: false, ...estimate });
  return view;
}

test('ETA: the range in the status bar and the notification, counting down from the estimate, never below 0', () => {
  const view = runningWith({});
  assert.equal(statusBarText(view, 'running', 10), '$(sync~spin) TensorRT 10.0 s \u00b7 about 4\u20136 min left');
  assert.equal(progressMessage(view, 'running', 10), 'Building engine 0/6 \u00b7 about 4\u20136 min left');
  // Two minutes later, no new estimate: the range has moved down by two minutes.
  assert.equal(statusBarText(view, 'running', 130), '$(sync~spin) TensorRT 2m 10s \u00b7 about 2\u20134 min left \u00b7 last activity 120 s ago');
  assert.equal(progressMessage(view, 'running', 360), 'Building engine 0/6 \u00b7 about 0\u201310 s left');
  assert.equal(progressMessage(view, 'running', 1000), 'Building engine 0/6 \u00b7 about 0\u20135 s left', 'past p90: the terminal\'s "0–5 s", not less');
  assert.match(statusTooltip(view, 10), /^tensorrt build of m\.onnx\nabout 4\u20136 min left, from 7 earlier builds\nBuilding engine 0\/6$/);
  assert.equal(statusBarText(view, 'cancelling', 10), '$(loading~spin) TensorRT 10.0 s \u00b7 cancelling', 'no ETA once Stop is pressed');
});

test('ETA: longer than any earlier build, a similar GPU, and none without enough history (the tooltip says why)', () => {
  const longer = runningWith({ longer_than_history: true, remaining: { p10: 20, p50: 25, p90: 33 } });
  assert.equal(statusBarText(longer, 'running', 10), '$(sync~spin) TensorRT 10.0 s \u00b7 longer than any earlier build');
  assert.equal(estimateText(longer.estimate!, 0), 'about 20\u201335 s left, longer than any of the 7 earlier builds');
  const similar = runningWith({ based_on: { builds: 4, match: 'similar' } });
  assert.equal(estimateText(similar.estimate!, 0), 'about 4\u20136 min left, from 4 earlier builds on similar GPUs');

  const none = runningWith({ remaining: null, based_on: { builds: 2, match: 'exact' } });
  assert.equal(statusBarText(none, 'running', 10), '$(sync~spin) TensorRT 10.0 s', 'no ETA: nothing in the status bar');
  assert.equal(progressMessage(none, 'running', 10), 'Building engine 0/6');
  assert.equal(statusTooltip(none, 10).split('\n')[1], 'no ETA: 2 earlier builds of this model and GPU (3 needed)');
  const one = runningWith({ remaining: null, based_on: { builds: 1, match: 'similar' } });
  assert.equal(estimateText(one.estimate!, 0), 'no ETA: 1 earlier build of this model and GPU on similar GPUs (3 needed)');
});

test('rangeText rounds as the terminal does: seconds in fives, minutes from 90 s, hours from 2 h', () => {
  assert.equal(rangeText(22, 33), '20\u201335 s');
  assert.equal(rangeText(30, 30), '30\u201335 s', 'never one number');
  assert.equal(rangeText(0, 0), '0\u20135 s');
  assert.equal(rangeText(60, 89), '60\u201390 s');
  assert.equal(rangeText(200, 359), '3\u20136 min');
  assert.equal(rangeText(5400, 7300), '1\u20133 h');
});

test('the end: a cache hit says which engine was reused, in the terminal\'s words; a miss says nothing more', () => {
  const key = '3e78f9d53e9c'.padEnd(64, '0');
  const finished = (extra: object) => {
    const view = new BuildView();
    view.apply({ v: 1, seq: 1, t: 0, type: 'build_start', build: 'b_2', backend: 'tensorrt', model: 'm.onnx', facts: {}, key, cache: 'hit' });
    view.apply({ v: 1, seq: 2, t: 0.2, type: 'build_finish', status: 'succeeded', error: null, elapsed: 0.2, cancel_latency: null,
                 phases: [], dropped: 0, key, ...extra });
    return view;
  };
  const hit = finished({ cache: 'hit', cache_age_seconds: 3 * 86400 + 7000, cache_built_seconds: 842 });
  assert.deepEqual(hit.endNotes(), ['reused the engine built 3 days ago in 14m 02s (engine cache, key 3e78f9d53e9c)']);
  assert.deepEqual(hit.summaryLines(), ['Build succeeded after 0.2 s', 'reused the engine built 3 days ago in 14m 02s (engine cache, key 3e78f9d53e9c)']);
  assert.deepEqual(finished({ cache: 'miss' }).endNotes(), []);
  assert.deepEqual(finished({}).endNotes(), []);
  assert.deepEqual(finished({ cache: 'hit' }).endNotes(), ['reused the engine built (engine cache, key 3e78f9d53e9c)']);
  assert.equal(formatAge(0.4), '0 seconds');
  assert.equal(formatAge(61), '1 minute');
  assert.equal(formatAge(5 * 3600 + 59), '5 hours');
});

test('the end: a build the last estimate found longer than every earlier one says so', () => {
  const end = (view: BuildView) => {
    view.apply({ v: 1, seq: 9, t: 400, type: 'build_finish', status: 'succeeded', error: null, elapsed: 400, cancel_latency: null, phases: [], dropped: 0 });
    return view.endNotes();
  };
  assert.deepEqual(end(runningWith({ longer_than_history: true })), ['took longer than any of the 7 earlier builds']);
  assert.deepEqual(end(runningWith({})), []);
});

test('with history (recorded): estimates with a range from 3 earlier builds, shown while the build runs', () => {
  const events = load('with-history');
  const r = replay(events);
  assert.equal(r.view.state, 'succeeded');
  const estimates = events.filter((e): e is EstimateEvent => e.type === 'estimate');
  assert.ok(estimates.length >= 1, 'the CLI sent estimates');
  for (const e of estimates) {
    assert.equal(e.based_on.builds, 3);
    assert.ok(e.remaining && e.remaining.p10 <= e.remaining.p50 && e.remaining.p50 <= e.remaining.p90, JSON.stringify(e.remaining));
  }
  const view = new BuildView();
  const shown: string[] = [];
  for (const e of events.filter((x) => x.type !== 'build_finish')) {
    view.apply(e);
    shown.push(statusBarText(view, 'running', e.t));
  }
  assert.ok(shown.some((s) => /\u00b7 about \d+\u2013\d+ s left/.test(s)), `the status bar showed the range:\n${shown.slice(-3).join('\n')}`);
  assert.match(statusTooltip(view, view.lastT), /\nabout \d+\u2013\d+ s left, (from|longer than any of the) 3 earlier builds$/);
});

test('without history (recorded): one "no ETA" estimate, nothing in the status bar', () => {
  const events = load('small-cnn');
  const estimates = events.filter((e): e is EstimateEvent => e.type === 'estimate');
  assert.equal(estimates.length, 1);
  assert.equal(estimates[0].remaining, null);
  const view = replay(events.filter((e) => e.type !== 'build_finish')).view;
  assert.doesNotMatch(statusBarText(view, 'running', view.lastT), /left|ETA/);
  assert.match(statusTooltip(view, view.lastT), /\nno ETA: 0 earlier builds of this model and GPU \(3 needed\)/);
});
