// The build page's "Earlier builds of this model and GPU": the durations of the builds
// of the same build key over time (GET /history?key=…), this build ringed once it is
// among them, and below it the comparison with the key's usual build
// (GET /builds/{id}/compare), once the build has ended and joined the history. Shown
// where the server keeps a history (its OpenAPI document lists GET /history).
import { api, serverOffers } from "./api.js";
import { h, setText } from "./dom.js";
import { fmtChange, fmtDuration } from "./format.js";
import { historyChart } from "./history_chart.js";

const LIMIT = 100;
const JOIN_RETRIES = 5;  // the history is written just after the record ends: look again

export class HistoryPanel {
  constructor(buildId) {
    this.id = buildId;
    this.wanted = "";
    this.generation = 0;
    this.note = h("p.muted", {text: "Looking for earlier builds…"});
    this.chartBox = h("div.chart-box");
    this.compareBox = h("div.compare", {dataset: {state: "waiting"}});
    this.element = h("section.panel.history", {"aria-labelledby": "history-title", hidden: true},
      h("h2", {id: "history-title", text: "Earlier builds of this model and GPU"}),
      this.chartBox, this.note, this.compareBox);
  }

  // Called on each draw: reads again when the key becomes known and once when the build ends.
  update(key, final) {
    const wanted = `${key || ""}|${final}`;
    if (wanted === this.wanted) return;
    this.wanted = wanted;
    this.load(key, final, ++this.generation, 0);
  }

  async load(key, final, generation, attempt) {
    if (!(await serverOffers("/history")) || generation !== this.generation) return;
    this.element.hidden = false;
    if (!key) {
      this.chartBox.replaceChildren();
      setText(this.note, "The build's key is not known yet: its earlier builds show here once it is.");
      this.showCompare("waiting", "");
      return;
    }
    let entries;
    try {
      entries = (await api(`/history?key=${encodeURIComponent(key)}&limit=${LIMIT}`)).builds || [];
    } catch (e) {
      if (e.status !== 401 && generation === this.generation) setText(this.note, `Could not read the build history: ${e.message}.`);
      return;
    }
    if (generation !== this.generation) return;
    const joined = entries.some((e) => e.build === this.id);
    if (final && !joined && attempt < JOIN_RETRIES) {
      setTimeout(() => { if (generation === this.generation) this.load(key, final, generation, attempt + 1); }, 1000);
    }
    this.drawChart(entries, joined);
    // Compared only where there is something to compare: the server would answer 409.
    const others = entries.filter((e) => e.build !== this.id && e.status === "succeeded").length;
    if (!final) this.showCompare("waiting", "The comparison with the usual build of this key follows once this build has ended.");
    else if (joined && others) this.loadComparison(generation);
    else if (joined) this.showCompare("none", "No comparison: no other successful build of this key yet.");
    else if (attempt >= JOIN_RETRIES) this.showCompare("none", "No comparison: this build is not in the build history.");
  }

  drawChart(entries, joined) {
    const others = entries.filter((e) => e.build !== this.id);
    if (!entries.length) {
      this.chartBox.replaceChildren();
      setText(this.note, "No earlier builds of this model and GPU: this is the first one.");
      return;
    }
    this.chartBox.replaceChildren(historyChart(entries, this.id));
    const ok = others.filter((e) => e.status === "succeeded").length;
    setText(this.note, `${others.length} earlier build${others.length === 1 ? "" : "s"} of this key (${ok} succeeded), ` +
      `oldest on the left; crosses did not succeed${joined ? ", the ring is this build" : ""}.`);
  }

  async loadComparison(generation) {
    let c;
    try {
      c = await api(`/builds/${encodeURIComponent(this.id)}/compare`);
    } catch (e) {
      if (e.status === 401 || generation !== this.generation) return;
      this.showCompare("none", e.status === 409 || e.status === 404 ? `No comparison: ${e.message}.`
        : `Could not read the comparison: ${e.message}.`);
      return;
    }
    if (generation !== this.generation) return;
    this.compareBox.dataset.state = "shown";
    this.compareBox.replaceChildren(
      h("p.verdict", {text: c.verdict}),
      h("table.summary.compare-table", {},
        h("thead", {}, h("tr", {}, h("th", {scope: "col", text: "Phase family (self time)"}),
          h("th.num", {scope: "col", text: c.before}), h("th.num", {scope: "col", text: c.after}),
          h("th.num", {scope: "col", text: "Change"}))),
        h("tbody", {}, compareRow("Whole build", c.before_elapsed, c.after_elapsed),
          ...(c.families || []).map((f) => compareRow(f.family, f.before, f.after)))));
  }

  showCompare(state, text) {
    this.compareBox.dataset.state = state;
    this.compareBox.replaceChildren(text ? h("p.muted", {text}) : "");
  }
}

function compareRow(name, before, after) {
  return h("tr", {}, h("td", {text: name}), h("td.num", {text: fmtDuration(before)}),
    h("td.num", {text: fmtDuration(after)}), h("td.num", {text: fmtChange(before, after)}));
}
