// The build page's tree of phases: a row per phase with a progress bar, its steps and
// its time, nested under its parent. A row is created when the phase is first drawn and
// then updated in place.
import { h, setText } from "./dom.js";
import { fmtDuration } from "./format.js";

// Phases deeper than this are dropped from the page once they finish (there are
// thousands in a large build); the top of the tree stays as a list of finished steps.
export const KEEP_FINISHED_DEPTH = 1;

export class PhaseTree {
  constructor(phases) {
    this.phases = phases;  // the build view's phase id -> phase (active ones, and the kept finished ones)
    this.list = h("ul.tree", {"aria-label": "Phases"});
    this.empty = h("p.tree-empty", {text: "No phase has started yet."});
    this.element = h("section.panel", {"aria-labelledby": "tree-title"},
      h("h2", {id: "tree-title", text: "Phases"}), this.empty, this.list);
  }
  // nowT: seconds since the build started, for the clocks of running phases.
  draw(changed, nowT, finished) {
    for (const p of changed) this.drawPhase(p, nowT);
    this.empty.hidden = this.list.firstChild !== null;
    setText(this.empty, finished ? "No phases." : "No phase has started yet.");
  }
  // Once a second: the clocks of the running phases.
  tick(nowT) {
    for (const p of this.phases.values()) if (p.end === null && p.li) setText(p.el_el, fmtDuration(Math.max(0, nowT - p.start)));
  }
  remove(p) { if (p.li) p.li.remove(); }
  ensureLi(p) {
    if (p.li) return p.li;
    p.name_el = h("span.name", {text: p.name, title: p.name});
    p.bar = h("progress", {max: p.total, value: 0, "aria-label": `${p.name} progress`});
    p.count_el = h("span.count");
    p.el_el = h("span.el");
    p.li = h("li", {dataset: {phase: p.id}}, h("div.ph", {}, p.name_el, p.bar, p.count_el, p.el_el));
    let container = this.list;
    if (p.parent && this.phases.has(p.parent.id)) {
      const parentLi = this.ensureLi(p.parent);
      if (!p.parent.kids) { p.parent.kids = h("ul"); parentLi.append(p.parent.kids); }
      container = p.parent.kids;
    }
    container.append(p.li);
    return p.li;
  }
  drawPhase(p, nowT) {
    this.ensureLi(p);
    const total = Math.max(p.total, 1);
    if (p.bar.max !== total) p.bar.max = total;
    if (p.bar.value !== p.done) p.bar.value = p.done;
    setText(p.count_el, `${p.done}/${p.total}`);
    if (p.end !== null) {
      p.li.classList.add(p.early ? "early" : "done");
      setText(p.el_el, fmtDuration(p.elapsed));
      if (p.kids && p.depth >= KEEP_FINISHED_DEPTH) { p.kids.remove(); p.kids = null; }
    } else {
      setText(p.el_el, fmtDuration(Math.max(0, nowT - p.start)));
    }
  }
}
