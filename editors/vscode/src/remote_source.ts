// A build on a trtwatch build service (docs/api.md): submitted with POST /builds (or an
// existing one attached by id), watched through GET /builds/{id}/events (Server-Sent
// Events, resumed with Last-Event-ID after a dropped connection), stopped with
// POST /builds/{id}/cancel.

import { BuildSource, SourceEnd, SourceListener } from './build_source';
import { BuildStatus, parseEvent } from './events';
import { SseParser } from './sse';

export interface RemoteSettings {
  url: string;     // e.g. http://gpu-host:8470
  token?: string;  // the service's --token-file content, sent as a bearer token
}

// The body of POST /builds (docs/api.md "Submit a build").
export type RemoteRequest =
  | { simulate: string; seed?: number; speed?: number; timeout?: string }
  | { model: string; options?: Record<string, string | number | boolean>; timeout?: string };

// `trtwatch build` flags as the service takes them: ["--fp16", "--memPoolSize=workspace:4G",
// "--timing-cache", "m.cache"] -> {fp16: true, memPoolSize: "workspace:4G", "timing-cache": "m.cache"}.
export function optionsForService(args: readonly string[]): Record<string, string | boolean> {
  const out: Record<string, string | boolean> = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (!a.startsWith('--')) throw new Error(`option "${a}" does not start with --; write trtwatch build flags like "--fp16"`);
    const eq = a.indexOf('=');
    if (eq > 0) {
      out[a.slice(2, eq)] = a.slice(eq + 1);
    } else if (i + 1 < args.length && !args[i + 1].startsWith('--')) {
      out[a.slice(2)] = args[++i];
    } else {
      out[a.slice(2)] = true;
    }
  }
  return out;
}

const RETRIES = 5;
// Requests other than the event stream (which is long-lived by design) give up after this.
const REQUEST_TIMEOUT_MS = 30000;
const RETRY_DELAY_MS = 2000;
const TERMINAL: readonly string[] = ['succeeded', 'failed', 'cancelled', 'timed_out', 'interrupted'];

export class RemoteSource implements BuildSource {
  readonly forceHint = 'the service kills the worker if it has not stopped 10 s after the cancel';
  private buildId: string | undefined;
  private readonly abort = new AbortController();
  private cancelSent = false;
  private listener: SourceListener | undefined;

  // `what`: a build to submit, or the id of one already on the service.
  constructor(private readonly settings: RemoteSettings, private readonly what: RemoteRequest | { attach: string }) {}

  get id(): string | undefined {
    return this.buildId;
  }

  private url(path: string): string {
    return this.settings.url.replace(/\/+$/, '') + path;
  }

  // Aborted when the watch is detached, or after REQUEST_TIMEOUT_MS.
  private shortSignal(): AbortSignal {
    return AbortSignal.any([this.abort.signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]);
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    const h: Record<string, string> = { ...extra };
    if (this.settings.token) h.Authorization = `Bearer ${this.settings.token.trim()}`;
    return h;
  }

  async run(listener: SourceListener): Promise<SourceEnd> {
    this.listener = listener;
    try {
      if ('attach' in this.what) {
        if (!/^b_[0-9a-f]{32}$/.test(this.what.attach)) {
          return { status: 'failed', unavailable: true, message: `"${this.what.attach}" is not a build id (b_ and 32 hex digits)` };
        }
        this.buildId = this.what.attach;
      } else {
        const res = await fetch(this.url('/builds'), {
          method: 'POST', body: JSON.stringify(this.what), signal: this.shortSignal(),
          headers: this.headers({ 'Content-Type': 'application/json' }),
        });
        const body = await res.text();
        if (res.status !== 201) return { status: 'failed', unavailable: true, message: `the service refused the build: ${res.status} ${errorText(body)}` };
        const id = safeJson(body)?.id;
        if (typeof id !== 'string') return { status: 'failed', unavailable: true, message: 'the service answered 201 without a build id' };
        this.buildId = id;
        listener.onLog(`[trtwatch] submitted build ${id} to ${this.settings.url}`);
      }
      if (this.cancelSent) void this.postCancel();
      return await this.follow(listener, this.buildId);
    } catch (e) {
      if (this.abort.signal.aborted) return { status: 'cancelled', message: 'stopped watching' };
      return { status: 'failed', unavailable: true, message: `cannot reach the build service at ${this.settings.url}: ${describeError(e)}` };
    }
  }

  // Streams the events, reconnecting with Last-Event-ID when the connection drops.
  private async follow(listener: SourceListener, id: string): Promise<SourceEnd> {
    let lastId: string | undefined;
    let finished = false;
    let failures = 0;
    for (;;) {
      let status = 0;
      try {
        const res = await fetch(this.url(`/builds/${id}/events`), {
          signal: this.abort.signal,
          headers: this.headers({ Accept: 'text/event-stream', ...(lastId ? { 'Last-Event-ID': lastId } : {}) }),
        });
        status = res.status;
        if (status === 204) break; // everything was delivered
        if (status !== 200 || !res.body) {
          const body = await res.text();
          return { status: 'failed', unavailable: lastId === undefined, message: `GET /builds/${id}/events: ${status} ${errorText(body)}` };
        }
        const parser = new SseParser((m) => {
          const parsed = parseEvent(m.data);
          if (!parsed.ok) {
            listener.onLog(`[trtwatch extension] ignored an event from the service: ${parsed.error}`);
            return;
          }
          if (m.id !== undefined) lastId = m.id;
          if (parsed.event.type === 'build_finish') finished = true;
          listener.onEvent(parsed.event);
        });
        const decoder = new TextDecoder();
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          parser.push(decoder.decode(chunk, { stream: true }));
          failures = 0;
        }
        if (finished) break;
      } catch (e) {
        if (this.abort.signal.aborted) return { status: 'cancelled', message: 'stopped watching' };
        if (++failures > RETRIES) return { status: 'failed', message: `lost the build service: ${describeError(e)}` };
        listener.onLog(`[trtwatch] event stream dropped (${describeError(e)}); reconnecting from event ${lastId ?? 'start'}`);
      }
      if (finished) break;
      await new Promise((r) => setTimeout(r, RETRY_DELAY_MS));
    }
    if (finished) return {};
    return this.recordOutcome(id);
  }

  // The record's status, for a stream that ended without build_finish (an interrupted build).
  private async recordOutcome(id: string): Promise<SourceEnd> {
    const res = await fetch(this.url(`/builds/${id}`), { headers: this.headers(), signal: this.shortSignal() });
    const record = safeJson(await res.text());
    const status = typeof record?.status === 'string' ? record.status : 'unknown';
    const error = typeof record?.error === 'string' ? `: ${record.error}` : '';
    const known = TERMINAL.includes(status) && status !== 'interrupted' ? (status as BuildStatus) : 'failed';
    return { status: known, message: `the service reports the build ${status}${error}` };
  }

  cancel(_force: boolean): void {
    // Idempotent on the service: a second request is answered 202 again.
    this.cancelSent = true;
    if (this.buildId) void this.postCancel();
  }

  private async postCancel(): Promise<void> {
    try {
      const res = await fetch(this.url(`/builds/${this.buildId}/cancel`), { method: 'POST', headers: this.headers(), signal: this.shortSignal() });
      const body = await res.text();
      if (res.status !== 202 && res.status !== 409) this.listener?.onLog(`[trtwatch] cancel refused: ${res.status} ${errorText(body)}`);
    } catch (e) {
      this.listener?.onLog(`[trtwatch] cannot send the cancel: ${describeError(e)}`);
    }
  }

  // Stops watching; the build itself goes on on the service.
  detach(): void {
    this.abort.abort();
  }
}

function safeJson(text: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function errorText(body: string): string {
  const e = safeJson(body)?.error;
  return typeof e === 'string' ? e : body.slice(0, 200);
}

function describeError(e: unknown): string {
  if (e instanceof Error) {
    const cause = (e as Error & { cause?: unknown }).cause;
    return cause instanceof Error ? `${e.message} (${cause.message})` : e.message;
  }
  return String(e);
}
