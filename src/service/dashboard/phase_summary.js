// The build page's "Where the time went": per phase name, how often it ran and its total
// and self time, the largest self times first. Fed each phase as it finishes.
import { h } from "./dom.js";
import { fmtDuration } from "./format.js";

const ROWS = 12;

// Set through the CSSOM: the page's Content-Security-Policy forbids style attributes.
function shareBar(share) {
  const bar = h("span.share");
  bar.style.width = (share * 70).toFixed(1) + "%";
  return bar;
}

export class PhaseSummary {
  constructor() {
    this.byName = new Map();  // phase name -> {name, count, total, self, max, early}
    this.dirty = false;
    this.drawnAt = 0;
    this.body = h("tbody");
    this.element = h("section.panel", {"aria-labelledby": "summary-title", hidden: true},
      h("h2", {id: "summary-title", text: "Where the time went"}),
      h("p.muted", {text: "Per phase name: total time (with children) and self time (without them); " +
        "the phases with the most self time are the bottlenecks."}),
      h("table.summary", {}, h("thead", {}, h("tr", {},
        h("th", {scope: "col", text: "Phase"}), h("th.num", {scope: "col", text: "Count"}),
        h("th.num", {scope: "col", text: "Total"}), h("th.num", {scope: "col", text: "Self"}),
        h("th.share-cell", {scope: "col", text: "Share of all self time"}))), this.body));
  }
  // A finished phase. Self time = elapsed minus the union of the children's intervals
  // (children on several builder threads overlap); the phase's own interval goes to its parent.
  add(p) {
    let covered = 0;
    if (p.spans.length) {
      p.spans.sort((a, b) => a[0] - b[0]);
      let [from, to] = p.spans[0];
      for (const [s, e] of p.spans) {
        if (s > to) { covered += to - from; from = s; to = e; } else if (e > to) to = e;
      }
      covered += to - from;
    }
    const self = Math.max(0, p.elapsed - covered);
    if (p.parent && p.parent.spans) p.parent.spans.push([p.start, p.end]);
    p.spans = null;
    let s = this.byName.get(p.name);
    if (!s) { s = {name: p.name, count: 0, total: 0, self: 0, max: 0, early: 0}; this.byName.set(p.name, s); }
    ++s.count; s.total += p.elapsed; s.self += self; s.max = Math.max(s.max, p.elapsed); if (p.early) ++s.early;
    this.dirty = true;
  }
  // Sorting is the costly part: at most once a second while the build runs.
  drawIfDue(now, finished) {
    if (this.dirty && (finished || now - this.drawnAt > 1000)) { this.draw(); this.drawnAt = now; }
  }
  draw() {
    this.dirty = false;
    const all = [...this.byName.values()];
    const rows = all.sort((a, b) => b.self - a.self).slice(0, ROWS);
    // Builder threads overlap, so shares are of all self time, not of the wall clock.
    const whole = Math.max(all.reduce((sum, s) => sum + s.self, 0), 1e-9);
    this.element.hidden = rows.length === 0;
    this.body.replaceChildren(...rows.map((s, i) => {
      const share = Math.min(1, s.self / whole);
      return h("tr" + (i < 3 && share >= 0.1 ? ".bottleneck" : ""), {},
        h("td", {text: s.name + (s.early ? ` (${s.early} early)` : "")}),
        h("td.num", {text: String(s.count)}), h("td.num", {text: fmtDuration(s.total)}),
        h("td.num", {text: fmtDuration(s.self)}),
        h("td.share-cell", {}, shareBar(share), ` ${Math.round(share * 100)} %`));
    }));
  }
}
