// The trtwatch event stream, protocol v1 (docs/events.md), as typed values.
// Lines come from another process or over the network: they are untrusted until
// parseEvent has checked every field the extension reads.

export type BuildStatus = 'succeeded' | 'failed' | 'cancelled' | 'timed_out';

interface Common {
  v: 1;
  seq: number;
  t: number;
}

// The build key and the engine cache's answer (docs/cache.md), on build_start and again
// on build_finish; each field only when known (absent without --engine-cache).
export interface CacheFields {
  key?: string;                 // 64 lowercase hex digits
  cache?: 'hit' | 'miss';
  cache_age_seconds?: number;   // a hit: how long before it the reused engine was built
  cache_built_seconds?: number; // a hit: how long that build took
}

export interface BuildStartEvent extends Common, CacheFields {
  type: 'build_start';
  build: string;
  backend: string;
  model: string;
  facts: Record<string, string>;
}

export interface PhaseStartEvent extends Common {
  type: 'phase_start';
  id: number;
  parent: number | null;
  phase: string;
  total: number;
}

export interface StepEvent extends Common {
  type: 'step';
  id: number;
  phase: string;
  step: number;
  total: number;
}

export interface PhaseFinishEvent extends Common {
  type: 'phase_finish';
  id: number;
  phase: string;
  completed: number;
  total: number;
  elapsed: number;
  early: boolean;
}

export interface CancelRequestedEvent extends Common {
  type: 'cancel_requested';
  reason: string;
  message: string;
}

export interface StallEvent extends Common {
  type: 'stall';
  silent_for: number;
}

export interface LogEvent extends Common {
  type: 'log';
  severity: string;
  message: string;
}

export interface PhaseSummary {
  phase: string;
  count: number;
  early: number;
  seconds: number; // total, child phases included
  self: number;    // less the time covered by direct child phases
}

export interface CancelLatency {
  to_first_false: number | null;
  to_return: number;
}

// The remaining time from the build history (docs/history.md); `remaining` is null when
// too few earlier builds are known.
export interface EstimateEvent extends Common {
  type: 'estimate';
  remaining: { p10: number; p50: number; p90: number } | null;
  based_on: { builds: number; match: string };
  longer_than_history: boolean;
}

export interface BuildFinishEvent extends Common, CacheFields {
  type: 'build_finish';
  status: BuildStatus;
  error: string | null;
  elapsed: number;
  cancel_latency: CancelLatency | null;
  phases: PhaseSummary[];
  dropped: number;
}

export type TrtEvent =
  | BuildStartEvent
  | PhaseStartEvent
  | StepEvent
  | PhaseFinishEvent
  | CancelRequestedEvent
  | StallEvent
  | LogEvent
  | EstimateEvent
  | BuildFinishEvent;

export type ParseResult = { ok: true; event: TrtEvent } | { ok: false; error: string };

type Json = Record<string, unknown>;

const STATUSES: readonly string[] = ['succeeded', 'failed', 'cancelled', 'timed_out'];

class Invalid extends Error {}

function field(o: Json, key: string): unknown {
  if (!Object.prototype.hasOwnProperty.call(o, key)) throw new Invalid(`missing "${key}"`);
  return o[key];
}

function num(o: Json, key: string, min = -Infinity): number {
  const v = field(o, key);
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min) throw new Invalid(`"${key}" is not a number >= ${min}`);
  return v;
}

function int(o: Json, key: string, min = -Infinity): number {
  const v = num(o, key, min);
  if (!Number.isInteger(v)) throw new Invalid(`"${key}" is not an integer`);
  return v;
}

function str(o: Json, key: string): string {
  const v = field(o, key);
  if (typeof v !== 'string') throw new Invalid(`"${key}" is not a string`);
  return v;
}

function obj(v: unknown, what: string): Json {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Invalid(`${what} is not an object`);
  return v as Json;
}

function strings(o: Json, key: string): Record<string, string> {
  const v = obj(field(o, key), `"${key}"`);
  const out: Record<string, string> = {};
  for (const [k, s] of Object.entries(v)) {
    if (typeof s === 'string') out[k] = s;
  }
  return out;
}

function cancelLatency(v: unknown): CancelLatency | null {
  if (v === null) return null;
  const o = obj(v, '"cancel_latency"');
  const first = field(o, 'to_first_false');
  if (first !== null && (typeof first !== 'number' || !Number.isFinite(first))) {
    throw new Invalid('"to_first_false" is not a number or null');
  }
  return { to_first_false: first, to_return: num(o, 'to_return', 0) };
}

function phaseSummaries(v: unknown): PhaseSummary[] {
  if (!Array.isArray(v)) throw new Invalid('"phases" is not an array');
  return v.map((p) => {
    const o = obj(p, 'an entry of "phases"');
    const seconds = num(o, 'seconds', 0);
    // "self" came later in v1: an older log's entry counts all of its time as its own.
    return { phase: str(o, 'phase'), count: int(o, 'count', 0), early: int(o, 'early', 0), seconds,
             self: Object.prototype.hasOwnProperty.call(o, 'self') ? num(o, 'self', 0) : seconds };
  });
}

function cacheFields(o: Json): CacheFields {
  const out: CacheFields = {};
  if (o.key !== undefined) {
    const key = str(o, 'key');
    if (!/^[0-9a-f]{64}$/.test(key)) throw new Invalid('"key" is not 64 lowercase hex digits');
    out.key = key;
  }
  if (o.cache !== undefined) {
    const cache = str(o, 'cache');
    if (cache !== 'hit' && cache !== 'miss') throw new Invalid(`"cache" ${JSON.stringify(cache).slice(0, 40)} is not hit or miss`);
    out.cache = cache;
  }
  if (o.cache_age_seconds !== undefined) out.cache_age_seconds = num(o, 'cache_age_seconds', 0);
  if (o.cache_built_seconds !== undefined) out.cache_built_seconds = num(o, 'cache_built_seconds', 0);
  return out;
}

function remaining(v: unknown): EstimateEvent['remaining'] {
  if (v === null) return null;
  const o = obj(v, '"remaining"');
  return { p10: num(o, 'p10', 0), p50: num(o, 'p50', 0), p90: num(o, 'p90', 0) };
}

function build(o: Json): TrtEvent {
  if (field(o, 'v') !== 1) throw new Invalid(`protocol version ${JSON.stringify(o.v)} is not 1; update the extension or trtwatch`);
  const common = { v: 1 as const, seq: int(o, 'seq', 1), t: num(o, 't', 0) };
  const type = str(o, 'type');
  switch (type) {
    case 'build_start':
      return { ...common, type, build: str(o, 'build'), backend: str(o, 'backend'), model: str(o, 'model'),
               facts: o.facts === undefined ? {} : strings(o, 'facts'), ...cacheFields(o) };
    case 'phase_start': {
      const parent = field(o, 'parent');
      if (parent !== null && !(typeof parent === 'number' && Number.isInteger(parent))) {
        throw new Invalid('"parent" is not an id or null');
      }
      return { ...common, type, id: int(o, 'id'), parent, phase: str(o, 'phase'), total: int(o, 'total') };
    }
    case 'step':
      return { ...common, type, id: int(o, 'id'), phase: str(o, 'phase'), step: int(o, 'step'), total: int(o, 'total') };
    case 'phase_finish': {
      const early = field(o, 'early');
      if (typeof early !== 'boolean') throw new Invalid('"early" is not a boolean');
      return { ...common, type, id: int(o, 'id'), phase: str(o, 'phase'), completed: int(o, 'completed', 0),
               total: int(o, 'total'), elapsed: num(o, 'elapsed', 0), early };
    }
    case 'cancel_requested':
      return { ...common, type, reason: str(o, 'reason'), message: str(o, 'message') };
    case 'stall':
      return { ...common, type, silent_for: num(o, 'silent_for', 0) };
    case 'log':
      return { ...common, type, severity: str(o, 'severity'), message: str(o, 'message') };
    case 'estimate': {
      const basedOn = obj(field(o, 'based_on'), '"based_on"');
      const longer = o.longer_than_history;
      return { ...common, type, remaining: remaining(field(o, 'remaining')),
               based_on: { builds: int(basedOn, 'builds', 0), match: str(basedOn, 'match') },
               longer_than_history: longer === true };
    }
    case 'build_finish': {
      const status = str(o, 'status');
      if (!STATUSES.includes(status)) throw new Invalid(`"status" ${JSON.stringify(status)} is not one of ${STATUSES.join(', ')}`);
      const error = field(o, 'error');
      if (error !== null && typeof error !== 'string') throw new Invalid('"error" is not a string or null');
      return { ...common, type, status: status as BuildStatus, error, elapsed: num(o, 'elapsed', 0),
               cancel_latency: cancelLatency(field(o, 'cancel_latency')), phases: phaseSummaries(field(o, 'phases')),
               dropped: o.dropped === undefined ? 0 : int(o, 'dropped', 0), ...cacheFields(o) };
    }
    default:
      throw new Invalid(`unknown event type ${JSON.stringify(type).slice(0, 60)}`);
  }
}

// One line of the stream -> an event, or why it is not one (never throws).
export function parseEvent(line: string): ParseResult {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { ok: false, error: `not JSON: ${JSON.stringify(line.slice(0, 80))}` };
  }
  try {
    return { ok: true, event: build(obj(value, 'the event')) };
  } catch (e) {
    if (e instanceof Invalid) return { ok: false, error: `not a trtwatch v1 event: ${e.message}` };
    throw e;
  }
}

// Splits a byte stream into lines (UTF-8, '\n'-terminated; a trailing '\r' is dropped).
// Bytes are buffered until their line is complete, so a multi-byte character split
// across two chunks decodes correctly.
export class LineSplitter {
  private pending: Buffer = Buffer.alloc(0);

  constructor(private readonly onLine: (line: string) => void, private readonly maxLine = 16 * 1024 * 1024) {}

  push(chunk: Buffer): void {
    let data = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    let nl: number;
    while ((nl = data.indexOf(0x0a)) >= 0) {
      this.emit(data.subarray(0, nl));
      data = data.subarray(nl + 1);
    }
    // A line longer than any event could be is cut rather than buffered without bound.
    if (data.length > this.maxLine) {
      this.emit(data);
      data = Buffer.alloc(0);
    }
    this.pending = Buffer.from(data);
  }

  end(): void {
    if (this.pending.length) this.emit(this.pending);
    this.pending = Buffer.alloc(0);
  }

  private emit(bytes: Buffer): void {
    let line = bytes.toString('utf8');
    if (line.endsWith('\r')) line = line.slice(0, -1);
    this.onLine(line);
  }
}
