// The builds page's "Timing caches": the service's timing cache per TensorRT version and
// GPU (GET /timing-caches), what each has done for the builds (served, taught it), a
// download link and a delete button. Read when the page opens and after builds end
// (their timings were just merged). Shown where the server keeps them.
import { api, serverOffers } from "./api.js";
import { h, setText } from "./dom.js";
import { fmtBytes, fmtRelative } from "./format.js";

const REREAD_MS = 1000;  // builds ending together: one read

export class TimingCachesPanel {
  constructor() {
    this.tbody = h("tbody");
    this.note = h("p.muted", {text: "Reading the timing caches…"});
    this.table = h("table.summary.timing-caches", {hidden: true},
      h("thead", {}, h("tr", {}, ...["GPU", "Builder", "#Size", "#Entries", "Last merged", "#Builds served", "#Taught it", ""]
        .map((t) => h(t.startsWith("#") ? "th.num" : "th", {scope: "col", text: t.replace("#", "")})))),
      this.tbody);
    this.element = h("section.panel.timing-caches", {"aria-labelledby": "timing-caches-title", hidden: true},
      h("h2", {id: "timing-caches-title", text: "Timing caches"}),
      h("p.muted", {text: "One per TensorRT version and GPU, given to every build on that GPU: later builds skip the " +
        "tactic timings earlier ones measured."}),
      h("div.table-scroll", {}, this.table), this.note);
    this.timer = 0;
    this.reload();
  }

  // After a build ends: read again once builds ending together have all merged.
  soon() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.reload(), REREAD_MS);
  }
  destroy() { clearTimeout(this.timer); }

  async reload() {
    if (!(await serverOffers("/timing-caches"))) return;
    let doc;
    try {
      doc = await api("/timing-caches");
    } catch (e) {
      if (e.status !== 401) { this.element.hidden = false; setText(this.note, `Could not read the timing caches: ${e.message}.`); }
      return;
    }
    this.element.hidden = false;
    const caches = doc.timing_caches || [];
    this.table.hidden = !caches.length;
    setText(this.note, !doc.enabled ? "This service keeps no timing caches (--no-timing-caches)."
      : caches.length ? "" : "None yet: the first build on each GPU starts one.");
    this.tbody.replaceChildren(...caches.map((c) => this.row(c)));
  }

  row(c) {
    const remove = h("button", {type: "button", text: "Delete", "aria-label": `Delete the timing cache ${c.name}`,
      on: {click: () => this.remove(c, remove)}});
    return h("tr", {dataset: {name: c.name}},
      h("td", {text: c.gpu || "—"}), h("td", {text: c.builder || "—"}), h("td.num", {text: fmtBytes(c.size)}),
      h("td.num", {text: c.entries === null ? "—" : String(c.entries)}),
      h("td", {text: c.last_merged ? fmtRelative(Date.parse(c.last_merged), Date.now()) : "—", title: c.last_merged || ""}),
      h("td.num", {text: String(c.builds_served)}), h("td.num", {text: String(c.builds_contributed)}),
      h("td", {}, h("a.download", {href: c.url, download: c.name, text: "Download"}), " ", remove));
  }

  async remove(c, button) {
    button.disabled = true;
    try {
      await api(c.url, {method: "DELETE"});
    } catch (e) {
      if (e.status !== 401) setText(this.note, `Could not delete ${c.name}: ${e.message}.`);
      button.disabled = false;
      return;
    }
    this.reload();
  }
}
