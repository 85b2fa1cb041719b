// A build's event stream (GET /builds/{id}/events), read as Server-Sent Events over
// fetch: unlike EventSource it can resume with Last-Event-ID on a connection of its own
// making (after an outage or a sign-in), tells 204 / 401 / 404 apart, and hands each
// network chunk over as one batch of events.
import { signInNeeded } from "./api.js";
import { showAlert } from "./alerts.js";

const SLICE_MS = 8;
const yieldToBrowser = () => (globalThis.scheduler && scheduler.yield ? scheduler.yield()
  : new Promise((resolve) => setTimeout(resolve, 0)));

export class EventStream {
  constructor(url, handlers) {
    this.url = url;
    this.handlers = handlers;  // onEvents(batch), onState(state), onEnd(), onError(status, message), finished()
    this.lastId = 0;
    this.retryMs = 2000;
    this.failures = 0;
    this.closed = false;
    this.controller = null;
    this.timer = 0;
    this.open();
  }
  close() {
    this.closed = true;
    clearTimeout(this.timer);
    if (this.controller) this.controller.abort();
  }
  retryLater() {
    if (this.closed) return;
    ++this.failures;
    this.handlers.onState(this.failures >= 3 ? "offline" : "reconnecting");
    const delay = Math.min(this.retryMs * Math.min(this.failures, 3), 10000);
    this.timer = setTimeout(() => this.open(), delay);
  }
  async open() {
    if (this.closed) return;
    this.controller = new AbortController();
    const headers = {Accept: "text/event-stream"};
    if (this.lastId) headers["Last-Event-ID"] = String(this.lastId);
    let res;
    try {
      res = await fetch(this.url, {headers, cache: "no-store", signal: this.controller.signal});
    } catch (e) {
      this.retryLater();
      return;
    }
    if (this.closed) return;
    if (res.status === 204) { this.handlers.onEnd(); return; }  // everything was delivered
    if (res.status === 401) { this.handlers.onState("signed-out"); signInNeeded(); return; }
    if (!res.ok) { await this.refused(res); return; }
    this.failures = 0;
    performance.mark("trtwatch:stream-open");
    this.handlers.onState("live");
    try {
      await this.read(res.body);
    } catch (e) {
      if (this.closed) return;
    }
    if (this.closed) return;
    if (this.handlers.finished()) { this.handlers.onEnd(); return; }
    this.retryLater();  // cut off before build_finish: resume after the last id
  }
  // An error answer: a server error is retried, anything else (404) is final.
  async refused(res) {
    let message = `${res.status} ${res.statusText}`;
    try { message = (await res.json()).error || message; } catch (e) { /* not JSON */ }
    if (res.status >= 500) { this.retryLater(); return; }
    this.handlers.onError(res.status, message);
  }
  async read(body) {
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const {done, value} = await reader.read();
      if (done || this.closed) return;
      buffer += value;
      // A replay arrives as a few large chunks: hand them over in slices of a few
      // milliseconds, yielding in between, so that no task blocks the page.
      let batch = [];
      let pos = 0;
      let sliceStart = performance.now();
      for (let end; (end = buffer.indexOf("\n\n", pos)) >= 0; pos = end + 2) {
        this.parseBlock(buffer.substring(pos, end), batch);
        if (batch.length % 64 === 0 && performance.now() - sliceStart > SLICE_MS) {
          this.handlers.onEvents(batch);
          batch = [];
          await yieldToBrowser();
          if (this.closed) return;
          sliceStart = performance.now();
        }
      }
      buffer = buffer.substring(pos);
      if (batch.length) this.handlers.onEvents(batch);
    }
  }
  parseBlock(block, batch) {
    let id = null;
    let data = "";
    for (let start = 0, end; start < block.length; start = end + 1) {
      end = block.indexOf("\n", start);
      if (end < 0) end = block.length;
      const line = block.substring(start, end);
      if (line.startsWith("data:")) data += (data ? "\n" : "") + line.slice(line.charAt(5) === " " ? 6 : 5);
      else if (line.startsWith("id:")) id = line.slice(3).trim();
      else if (line.startsWith("retry:")) { const ms = Number(line.slice(6)); if (ms > 0) this.retryMs = ms; }
    }
    if (id !== null && /^\d+$/.test(id)) this.lastId = Number(id);
    if (!data) return;
    try {
      const event = JSON.parse(data);
      event.raw = data;
      batch.push(event);
    } catch (e) {
      showAlert("The event stream sent a line that is not JSON; the view may be incomplete.", "bad-event");
    }
  }
}
