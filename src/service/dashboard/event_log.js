// The build page's event log: the raw events as the stream sent them (all, without
// steps, or only log lines, stalls and cancellation; the last 2,000 that match), drawn
// only while it is open, and a download of all of them as JSON lines.
import { h, setText } from "./dom.js";

const LIMIT = 2000;

export class EventLog {
  constructor(events, buildId) {
    this.events = events;  // raw JSON text of every event, appended to by the build view
    this.buildId = buildId;
    this.drawnAt = 0;
    this.filter = h("select", {"aria-label": "Which events to show", on: {change: () => this.draw()}},
      h("option", {value: "all", text: "All events"}), h("option", {value: "structure", text: "Without steps"}),
      h("option", {value: "logs", text: "Log lines, stalls and cancellation"}));
    this.count = h("span.muted");
    this.pre = h("pre.log", {tabindex: "0", "aria-label": "Event log"});
    this.element = h("details.panel", {on: {toggle: () => this.draw()}},
      h("summary", {text: "Event log"}),
      h("div.log-tools", {}, this.filter, this.count,
        h("button", {type: "button", text: "Download events (.jsonl)", on: {click: () => this.download()}})),
      this.pre);
  }
  // Redrawing thousands of lines: at most once a second while the build runs.
  drawIfDue(now, finished) {
    if (this.element.open && (finished || now - this.drawnAt > 1000)) this.draw();
  }
  draw() {
    this.drawnAt = performance.now();
    if (!this.element.open) return;
    const filter = this.filter.value;
    const keep = filter === "all" ? null : filter === "structure" ? /"type":"(?!step")/ : /"type":"(log|stall|cancel_requested|build_finish)"/;
    const lines = [];
    let matched = 0;
    for (let i = this.events.length - 1; i >= 0; --i) {
      const raw = this.events[i];
      if (keep && !keep.test(raw)) continue;
      if (++matched <= LIMIT) lines.push(raw);
    }
    lines.reverse();
    setText(this.count, matched > LIMIT ? `the last ${LIMIT} of ${matched} events` : `${matched} events`);
    setText(this.pre, lines.join("\n"));
  }
  download() {
    const url = URL.createObjectURL(new Blob([this.events.join("\n") + "\n"], {type: "application/jsonl"}));
    const a = h("a", {href: url, download: `${this.buildId}.events.jsonl`});
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  }
}
