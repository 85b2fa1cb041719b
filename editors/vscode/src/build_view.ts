// The event stream folded into what the editor shows: the live phase tree, the
// notification's message and percentage, the build's state and its summary. Pure: no
// vscode, no clock, no I/O, so it is unit-tested on recorded streams. Times are build
// time (seconds since build_start, the events' `t`); the caller says what "now" is.

import { BuildFinishEvent, BuildStatus, CacheFields, EstimateEvent, TrtEvent } from './events';

export type BuildState = 'starting' | 'running' | 'cancelling' | BuildStatus;

export class PhaseNode {
  readonly children: PhaseNode[] = [];
  done = 0; // steps reported (step + 1 of the latest step event)
  finishedAt: number | undefined;
  elapsed: number | undefined; // as the CLI measured it, once finished
  early = false;

  constructor(
    readonly id: number,
    readonly name: string,
    readonly parent: PhaseNode | undefined,
    readonly total: number,
    readonly startedAt: number,
  ) {}

  get active(): boolean {
    return this.finishedAt === undefined;
  }

  get depth(): number {
    return this.parent ? this.parent.depth + 1 : 0;
  }

  // Seconds this phase has run (its measured time once finished).
  elapsedAt(now: number): number {
    return this.elapsed ?? Math.max(0, now - this.startedAt);
  }

  // Share of its steps done, 0..1 (0 when TensorRT gave no usable step count).
  get fraction(): number {
    return this.total > 0 ? Math.min(this.done, this.total) / this.total : 0;
  }
}

// The separator between levels of the phase path, as in the issue's picture.
export const PATH_SEPARATOR = ' \u203a ';

export class BuildView {
  state: BuildState = 'starting';
  buildId = '';
  backend = '';
  model = '';
  facts: Record<string, string> = {};
  readonly roots: PhaseNode[] = [];
  private readonly byId = new Map<number, PhaseNode>();
  lastSeq = 0;
  lastT = 0;              // build time of the newest event
  lastProgressT = 0;      // build time of the newest phase or step event
  stalledFor: number | undefined;
  estimate: EstimateEvent | undefined;  // the latest from the build history, if any
  cancelReason: string | undefined;
  cancelMessage: string | undefined;
  cancelRequestedAt: number | undefined;
  finish: BuildFinishEvent | undefined;
  phasesFinished = 0;
  // The notification's percentage: never goes back (see topLevelPercent).
  percent = 0;
  // Events the view could not place (a step for an unknown id, a second build_start...).
  readonly ignored: string[] = [];

  get finished(): boolean {
    return this.finish !== undefined;
  }

  apply(e: TrtEvent): void {
    if (this.finished) {
      this.ignored.push(`${e.type} after build_finish`);
      return;
    }
    if (e.seq <= this.lastSeq) {
      // A replay overlap (SSE reconnect): the view has it already.
      this.ignored.push(`${e.type} seq ${e.seq} not after ${this.lastSeq}`);
      return;
    }
    this.lastSeq = e.seq;
    this.lastT = Math.max(this.lastT, e.t);
    switch (e.type) {
      case 'build_start':
        this.buildId = e.build;
        this.backend = e.backend;
        this.model = e.model;
        this.facts = e.facts;
        if (this.state === 'starting') this.state = 'running';
        break;
      case 'phase_start': {
        if (this.byId.has(e.id)) {
          this.ignored.push(`phase_start for id ${e.id} twice`);
          break;
        }
        const parent = e.parent === null ? undefined : this.byId.get(e.parent);
        const node = new PhaseNode(e.id, e.phase, parent, e.total, e.t);
        (parent ? parent.children : this.roots).push(node);
        this.byId.set(e.id, node);
        this.progressed(e.t);
        break;
      }
      case 'step': {
        const node = this.byId.get(e.id);
        if (!node) {
          this.ignored.push(`step for unknown phase id ${e.id}`);
          break;
        }
        node.done = Math.max(node.done, e.step + 1);
        this.progressed(e.t);
        break;
      }
      case 'phase_finish': {
        const node = this.byId.get(e.id);
        if (!node || !node.active) {
          this.ignored.push(`phase_finish for ${node ? 'finished' : 'unknown'} phase id ${e.id}`);
          break;
        }
        node.done = Math.max(node.done, e.completed);
        node.finishedAt = e.t;
        node.elapsed = e.elapsed;
        node.early = e.early;
        this.phasesFinished++;
        this.progressed(e.t);
        break;
      }
      case 'cancel_requested':
        this.cancelReason = e.reason;
        this.cancelMessage = e.message;
        this.cancelRequestedAt = e.t;
        this.state = 'cancelling';
        break;
      case 'stall':
        this.stalledFor = e.silent_for;
        break;
      case 'log':
        break;
      case 'estimate':
        this.estimate = e;
        break;
      case 'build_finish':
        this.finish = e;
        this.state = e.status;
        break;
    }
  }

  private progressed(t: number): void {
    this.lastProgressT = t;
    this.stalledFor = undefined;
    this.percent = Math.max(this.percent, this.topLevelPercent());
  }

  // The chain of newest active phases, outermost first: the top-level phase that started
  // last, then at each level its child that started last and is still active.
  activePath(): PhaseNode[] {
    const path: PhaseNode[] = [];
    let level = this.roots;
    for (;;) {
      const next = newestActive(level);
      if (!next) return path;
      path.push(next);
      level = next.children;
    }
  }

  // "Building engine 2/6 › Timing graph nodes 47/83" (counts are steps reported).
  message(): string {
    return this.activePath()
      .map((p) => (p.total > 0 ? `${p.name} ${Math.min(p.done, p.total)}/${p.total}` : p.name))
      .join(PATH_SEPARATOR);
  }

  // Percentage (0..100) of the top-level phase: its steps done, plus the share of the
  // step in progress that its active child has done. Follows the newest top-level phase.
  // It can dip (a child finishes before its parent's step is reported, the next child
  // starts at 0), so the views show `percent`, its running maximum.
  topLevelPercent(): number {
    const top = this.roots.length ? this.roots[this.roots.length - 1] : undefined;
    if (!top || top.total <= 0) return 0;
    if (!top.active) return top.early ? 100 * top.fraction : 100;
    const child = newestActive(top.children);
    const inStep = child && top.done < top.total ? child.fraction : 0;
    return Math.min(100, (100 * (Math.min(top.done, top.total) + inStep)) / top.total);
  }

  // Seconds since the last phase or step event, at build time `now`.
  silentFor(now: number): number {
    return Math.max(0, now - this.lastProgressT);
  }

  // The ETA while the build runs, counted down from the latest estimate to build time
  // `now`: "about 4–6 min left"; undefined without a range (too little history).
  eta(now: number): string | undefined {
    const e = this.estimate;
    if (!e?.remaining) return undefined;
    return e.longer_than_history ? LONGER_THAN_HISTORY : etaRange(e.remaining, now - e.t);
  }

  // What the stream says about the finished build beyond its status: the engine cache's
  // reuse, and that it took longer than every earlier build (the last estimate's verdict).
  endNotes(): string[] {
    const notes: string[] = [];
    const reuse = this.finish && reuseText(this.finish);
    if (reuse) notes.push(reuse);
    const e = this.estimate;
    if (e?.remaining && e.longer_than_history) notes.push(`took longer than any of the ${earlierBuilds(e)}`);
    return notes;
  }

  // "SIMULATED build of large-transformer" or "tensorrt build of model.onnx".
  describe(): string {
    const what = this.backend ? `${this.backend} build` : 'build';
    const model = this.model.startsWith('simulated:') ? this.model.slice('simulated:'.length) : this.model;
    if (this.backend === 'simulated') return `SIMULATED build of ${model}`;
    return model ? `${what} of ${model}` : what;
  }

  // The final summary as lines: status, error, cancel latency, the slowest phases.
  summaryLines(maxPhases = 5): string[] {
    const f = this.finish;
    if (!f) return [];
    const lines = [`${statusTitle(f.status)} after ${formatSeconds(f.elapsed)}`];
    if (f.error) lines.push(`error: ${f.error}`);
    lines.push(...this.endNotes());
    if (f.cancel_latency) {
      const first = f.cancel_latency.to_first_false;
      lines.push(`cancel latency: ${first === null ? 'no step boundary reached' : formatSeconds(first) + ' to the next step'}, ` +
                 `${formatSeconds(f.cancel_latency.to_return)} until TensorRT returned`);
    }
    if (f.phases.length > 0) lines.push(`  ${'total'.padStart(8)}  ${'self'.padStart(8)}  phase (self: less its child phases)`);
    for (const p of f.phases.slice(0, maxPhases)) {
      const count = p.count > 1 ? ` ×${p.count}` : '';
      const early = p.early ? ` (${p.early} stopped early)` : '';
      lines.push(`  ${formatSeconds(p.seconds).padStart(8)}  ${formatSeconds(p.self).padStart(8)}  ${p.phase}${count}${early}`);
    }
    if (f.dropped > 0) lines.push(`${f.dropped} progress updates were coalesced on the way (not an error)`);
    return lines;
  }
}

function newestActive(nodes: PhaseNode[]): PhaseNode | undefined {
  for (let i = nodes.length - 1; i >= 0; i--) {
    if (nodes[i].active) return nodes[i];
  }
  return undefined;
}

export function statusTitle(state: BuildState): string {
  switch (state) {
    case 'starting': return 'Starting';
    case 'running': return 'Building';
    case 'cancelling': return 'Cancelling';
    case 'succeeded': return 'Build succeeded';
    case 'failed': return 'Build failed';
    case 'cancelled': return 'Build cancelled';
    case 'timed_out': return 'Build timed out';
  }
}

// Silence longer than this shows "last activity N s ago" (as the terminal view does).
export const QUIET_AFTER_S = 3;

// The status bar while a build runs:
// "$(sync~spin) TensorRT 43.0 s · about 4–6 min left · last activity 42 s ago".
export function statusBarText(view: BuildView, state: BuildState, now: number): string {
  const quiet = view.silentFor(now);
  const icon = state === 'cancelling' ? '$(loading~spin)' : '$(sync~spin)';
  let text = `${icon} TensorRT ${formatSeconds(now)}`;
  const eta = view.eta(now);
  if (state === 'cancelling') text += ' \u00b7 cancelling';
  else if (eta) text += ` \u00b7 ${eta}`;
  if (view.stalledFor !== undefined || quiet >= QUIET_AFTER_S) text += ` \u00b7 last activity ${Math.floor(quiet)} s ago`;
  return text;
}

// The status bar's tooltip while a build runs: what is built, the estimate in full (or
// why there is none), the phase path one level a line.
export function statusTooltip(view: BuildView, now: number): string {
  const lines = [view.describe()];
  if (view.estimate) lines.push(estimateText(view.estimate, now - view.estimate.t));
  const path = view.message();
  if (path) lines.push(...path.split(PATH_SEPARATOR));
  return lines.join('\n');
}

// The progress notification's message while running: the phase path, then the ETA.
export function progressMessage(view: BuildView, state: BuildState, now: number): string {
  const text = view.message() || statusTitle(state);
  const eta = view.eta(now);
  return eta ? `${text} \u00b7 ${eta}` : text;
}

// The short form of an estimate's "longer than any of the 7 earlier builds".
export const LONGER_THAN_HISTORY = 'longer than any earlier build';

// "about 4–6 min left": the range of the remaining time `since` seconds after the
// estimate, never below 0 (past p90 the terminal's "about 0–5 s left").
export function etaRange(remaining: { p10: number; p90: number }, since: number): string {
  const spent = Math.max(0, since);
  return `about ${rangeText(Math.max(0, remaining.p10 - spent), Math.max(0, remaining.p90 - spent))} left`;
}

// The estimate as the terminal says it (src/sinks/format.cc EstimateText): "about 4–6 min
// left, from 7 earlier builds", "… longer than any of the 7 earlier builds", and without
// a range "no ETA: 2 earlier builds of this model and GPU (3 needed)".
export function estimateText(e: EstimateEvent, since: number): string {
  if (!e.remaining) return `no ETA: ${earlierBuilds(e, ' of this model and GPU')} (3 needed)`;
  return `${etaRange(e.remaining, since)}, ${e.longer_than_history ? 'longer than any of the' : 'from'} ${earlierBuilds(e)}`;
}

// "7 earlier builds", "7 earlier builds on similar GPUs" (`what` goes before the GPUs).
function earlierBuilds(e: EstimateEvent, what = ''): string {
  const n = e.based_on.builds;
  return `${n} earlier build${n === 1 ? '' : 's'}${what}${e.based_on.match === 'similar' ? ' on similar GPUs' : ''}`;
}

// "20–35 s", "4–6 min", "2–3 h" (the terminal's RangeText): seconds in fives below 90 s,
// hours from 2 h; the low end rounded down, the high end up, never equal.
export function rangeText(low: number, high: number): string {
  const [unit, step, name] = high >= 7200 ? [3600, 1, 'h'] : high >= 90 ? [60, 1, 'min'] : [1, 5, 's'];
  const lo = Math.floor(low / unit / step) * step;
  const hi = Math.max(Math.ceil(high / unit / step) * step, lo + step);
  return `${lo}\u2013${hi} ${name}`;
}

// A cache hit, in the terminal's words (src/sinks/format.cc FormatReuse): "reused the
// engine built 3 days ago in 14m 02s (engine cache, key 3e78f9d53e9c)"; else undefined.
export function reuseText(c: CacheFields): string | undefined {
  if (c.cache !== 'hit') return undefined;
  let text = 'reused the engine built';
  if (c.cache_age_seconds !== undefined) text += ` ${formatAge(c.cache_age_seconds)} ago`;
  if (c.cache_built_seconds !== undefined) text += ` in ${formatSeconds(c.cache_built_seconds)}`;
  return `${text} (engine cache${c.key ? `, key ${c.key.slice(0, 12)}` : ''})`;
}

const AGE_UNITS: readonly [number, string][] = [[86400, 'day'], [3600, 'hour'], [60, 'minute'], [1, 'second']];

// How long ago, in the largest whole unit: "40 seconds", "1 minute", "3 days".
export function formatAge(seconds: number): string {
  const s = Math.max(0, Number.isFinite(seconds) ? seconds : 0);
  const [size, name] = AGE_UNITS.find(([size]) => s >= size) ?? AGE_UNITS[AGE_UNITS.length - 1];
  const count = Math.floor(s / size);
  return `${count} ${name}${count === 1 ? '' : 's'}`;
}

// A tree row's description: "47/83 · 12.3 s" (no count when TensorRT gave no steps).
export function describePhase(node: PhaseNode, now: number): string {
  const elapsed = formatSeconds(node.elapsedAt(now));
  return node.total > 0 ? `${Math.min(node.done, node.total)}/${node.total} \u00b7 ${elapsed}` : elapsed;
}

// Text from the builder or a service made safe for VS Code's notifications, which render
// Markdown links (command: links included): control characters become '?', and "](" is
// split so that no link can form. The output channel and tree view show text as is.
export function notificationText(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?').replace(/\]\(/g, '] (');
}

// "0.4 s", "12.3 s", "4m 05s", "1h 02m" — the terminal view's style.
export function formatSeconds(s: number): string {
  if (!Number.isFinite(s) || s < 0) s = 0;
  if (s < 60) return `${s.toFixed(1)} s`;
  const total = Math.floor(s);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const sec = total % 60;
  if (h > 0) return `${h}h ${String(m).padStart(2, '0')}m`;
  return `${m}m ${String(sec).padStart(2, '0')}s`;
}
