// The build list (/, filters in the URL: /?status=failed,cancelled&model=resnet): the
// first page, kept current by the service's record changes, older pages on request,
// build groups as one row each, the form that submits a build, and the timing caches.
import { api } from "./api.js";
import { clearAlert, showAlert } from "./alerts.js";
import { h, mainEl, setText } from "./dom.js";
import { fmtClock } from "./format.js";
import { GroupRow } from "./group_row.js";
import { ListRow } from "./list_row.js";
import { FINAL, STATUSES, STATUS_TEXT } from "./record.js";
import { SubmitForm } from "./submit_form.js";
import { TimingCachesPanel } from "./timing_caches_panel.js";

const PAGE = 25;
const TYPING_PAUSE_MS = 300;  // the model filter reads the list once typing pauses

export class ListView {
  constructor() {
    const params = new URLSearchParams(location.search);
    this.filter = new Set((params.get("status") || "").split(",").filter((s) => STATUSES.includes(s)));
    this.model = (params.get("model") || "").trim();  // a substring of the model or profile
    this.rows = new Map();      // id -> row (a group member's row belongs to its group)
    this.groups = new Map();    // group id -> GroupRow
    this.firstPage = [];        // ids on the first page, newest first
    this.older = [];            // ids loaded by "Load older builds"
    this.cursor = undefined;    // next_cursor after the last page loaded
    this.failed = false;
    this.updatedAt = 0;
    this.generation = 0;
    this.timer = 0;
    this.destroyed = false;
    this.live = false;          // the change stream is open: no polling
    this.render();
    this.follow();
  }
  destroy() {
    this.destroyed = true;
    clearTimeout(this.timer);
    clearTimeout(this.typing);
    this.caches.destroy();
    this.changes?.close();
    delete mainEl.dataset.live;
  }

  // Record changes pushed by the service (GET /builds/changes). Each (re)connection
  // reads the list once, then applies the changes; while the stream is down the list
  // is polled, and marked as not up to date if that fails too.
  follow() {
    this.changes = new EventSource("/builds/changes");
    this.changes.addEventListener("open", () => { this.live = true; mainEl.dataset.live = "true"; this.refresh(); });
    this.changes.addEventListener("record", (e) => { if (!this.destroyed) this.onRecord(JSON.parse(e.data)); });
    this.changes.addEventListener("error", () => {
      if (this.destroyed || !this.live) return;
      this.live = false;
      mainEl.dataset.live = "false";
      this.refresh();
    });
    this.refresh();
  }
  onRecord(build) {
    if (build.status === "succeeded") this.caches.soon();  // its timings were merged
    // Whether a new record matches the model filter is the service's call: read the list.
    if (this.model && !this.rows.has(build.id)) { this.refresh(); return; }
    if (this.filter.size && !this.filter.has(build.status)) {
      if (this.rows.has(build.id)) {  // it left the filter
        this.rows.get(build.id).tr.remove();
        this.rows.delete(build.id);
        this.firstPage = this.firstPage.filter((id) => id !== build.id);
        this.older = this.older.filter((id) => id !== build.id);
        this.order();
      }
      return;
    }
    const known = this.rows.has(build.id);
    this.upsert(build);
    if (!known) {  // new, or it entered the filter: in place by creation time, newest first
      const at = this.firstPage.findIndex((id) => (this.rows.get(id).build.created_at || "") < (build.created_at || ""));
      if (at >= 0) this.firstPage.splice(at, 0, build.id);
      else if (!this.cursor) this.firstPage.push(build.id);
      else { this.rows.get(build.id).tr.remove(); this.rows.delete(build.id); }  // older than the loaded pages
    }
    this.order();
    this.tick();
  }

  render() {
    document.title = "Builds · trtwatch";
    this.tbody = h("tbody");
    this.table = h("table.builds", {"aria-describedby": "list-state"},
      h("caption.muted", {id: "list-state", text: ""}),
      h("thead", {}, h("tr", {}, ...["Status", "Build", "Model or profile", "Started", "Duration", "Activity", ""]
        .map((t) => h("th", {scope: "col", text: t})))),
      this.tbody);
    this.caption = this.table.querySelector("caption");
    this.empty = h("p.empty", {hidden: true, text: "No builds yet. Submit one above, or POST /builds."});
    this.caches = new TimingCachesPanel();
    this.more = h("button", {type: "button", hidden: true, text: "Load older builds",
      on: {click: () => this.loadOlder()}});
    const chips = STATUSES.map((s) => h("label.chip", {},
      h("input", {type: "checkbox", value: s, checked: this.filter.has(s), on: {change: (e) => this.toggle(s, e.target.checked)}}),
      STATUS_TEXT[s]));
    mainEl.replaceChildren(
      h("h1", {text: "Builds", tabindex: "-1"}),
      new SubmitForm().element,
      h("div.toolbar", {}, h("fieldset.filters", {}, h("legend", {text: "Status"}), ...chips),
        h("label.model-filter", {}, "Model",
          h("input", {type: "search", name: "model", value: this.model, "aria-label": "Filter builds by model", placeholder: "any", autocomplete: "off",
            spellcheck: false, maxlength: "256", on: {input: (e) => this.onModelInput(e.target.value)}}))),
      this.table, this.empty, h("div.more", {}, this.more), this.caches.element);
  }
  toggle(status, on) {
    if (on) this.filter.add(status); else this.filter.delete(status);
    this.filtersChanged();
  }
  // Typing narrows the list once it pauses, not at every key.
  onModelInput(value) {
    clearTimeout(this.typing);
    this.typing = setTimeout(() => {
      if (value.trim() === this.model) return;
      this.model = value.trim();
      this.filtersChanged();
    }, TYPING_PAUSE_MS);
  }
  // The filters go into the page's URL (a reload or a shared link keeps them), then the list is read again.
  filtersChanged() {
    const q = new URLSearchParams();
    if (this.filter.size) q.set("status", [...this.filter].join(","));
    if (this.model) q.set("model", this.model);
    const query = q.toString().replace(/%2C/g, ",");
    history.replaceState(null, "", "/" + (query ? "?" + query : ""));
    this.tbody.replaceChildren();
    this.rows.clear();
    this.groups.clear();
    this.firstPage = [];
    this.older = [];
    this.cursor = undefined;
    this.refresh();
  }
  query(cursor) {
    const q = new URLSearchParams({limit: String(PAGE)});
    if (this.filter.size) q.set("status", [...this.filter].join(","));
    if (this.model) q.set("model", this.model);
    if (cursor) q.set("cursor", cursor);
    return "/builds?" + q.toString().replace(/%2C/g, ",");
  }
  // The first page again (new builds, changed states), then every older row still live.
  async refresh() {
    clearTimeout(this.timer);
    const generation = ++this.generation;  // a newer refresh (a filter change) wins
    try {
      const page = await api(this.query());
      if (this.destroyed || generation !== this.generation) return;
      const ids = page.builds.map((b) => b.id);
      const keep = new Set([...ids, ...this.older]);
      for (const id of this.firstPage) if (!keep.has(id)) { this.rows.get(id)?.tr.remove(); this.rows.delete(id); }
      for (const b of page.builds) this.upsert(b);
      this.firstPage = ids;
      this.older = this.older.filter((id) => !ids.includes(id));
      if (this.cursor === undefined || !this.older.length) this.cursor = page.next_cursor;
      await this.refreshOlderLive();
      if (this.destroyed || generation !== this.generation) return;
      this.order();
      this.failed = false;
      this.updatedAt = Date.now();
      this.table.classList.remove("stale");
      setText(this.caption, "");
      clearAlert("list");
    } catch (e) {
      if (this.destroyed || e.status === 401 || generation !== this.generation) return;
      this.failed = true;
      this.table.classList.add("stale");
      setText(this.caption, `Not up to date: ${e.message}.` +
        (this.updatedAt ? ` Showing what was known at ${fmtClock(this.updatedAt).slice(11)}.` : ""));
    }
    this.tick();
    if (this.destroyed || this.live) return;  // pushed changes keep it current
    const interval = document.hidden ? 10000 : this.failed ? 3000 : 1500;
    this.timer = setTimeout(() => this.refresh(), interval);
  }
  async refreshOlderLive() {
    for (const id of this.older) {
      const row = this.rows.get(id);
      if (row && !FINAL.has(row.build.status)) {
        try { row.update(await api(`/builds/${id}`)); } catch (e) { if (e.status !== 404) throw e; }
      }
    }
  }
  async loadOlder() {
    if (!this.cursor) return;
    this.more.disabled = true;
    try {
      const page = await api(this.query(this.cursor));
      for (const b of page.builds) {
        if (this.rows.has(b.id)) continue;
        this.upsert(b);
        this.older.push(b.id);
      }
      this.cursor = page.next_cursor;
      this.order();
    } catch (e) {
      if (e.status !== 401) showAlert(`Could not load older builds: ${e.message}`, "list");
    }
    this.more.disabled = false;
  }
  upsert(build) {
    const gid = build.group && build.group.id;
    if (gid) {  // a group member: its group's row holds it
      let group = this.groups.get(gid);
      if (!group) { group = new GroupRow(gid, () => this.refresh(), () => this.order()); this.groups.set(gid, group); }
      this.rows.set(build.id, group.upsertMember(build));
      return;
    }
    let row = this.rows.get(build.id);
    if (!row) { row = new ListRow(build, () => this.refresh()); this.rows.set(build.id, row); }
    else row.update(build);
  }
  // The rows to show in order: a group's rows where its newest member would be.
  shownRows(ids) {
    const trs = [];
    const placed = new Set();
    for (const id of ids) {
      const row = this.rows.get(id);
      const gid = row.build.group && row.build.group.id;
      if (!gid) trs.push(row.tr);
      else if (!placed.has(gid) && this.groups.has(gid)) { placed.add(gid); trs.push(...this.groups.get(gid).trs()); }
    }
    return trs;
  }
  // Puts rows in order, moving only those out of place (a moved row would lose focus),
  // and takes off those no longer shown (a closed group's members).
  order() {
    if (this.destroyed) return;
    const ids = [...this.firstPage, ...this.older].filter((id) => this.rows.has(id));
    let at = this.tbody.firstChild;
    for (const tr of this.shownRows(ids)) {
      if (tr === at) { at = at.nextSibling; continue; }
      this.tbody.insertBefore(tr, at);
    }
    while (at) { const next = at.nextSibling; at.remove(); at = next; }
    this.empty.hidden = ids.length > 0;
    if (!ids.length) setText(this.empty, this.model ? `No builds of a model matching “${this.model}”` + (this.filter.size ? " with these statuses." : ".")
      : this.filter.size ? "No builds with these statuses." : "No builds yet. Submit one above, or POST /builds.");
    this.more.hidden = !this.cursor;
  }
  tick() {
    const now = Date.now();
    for (const row of this.rows.values()) if (!row.build.group) row.tick(now, this.failed);
    for (const group of this.groups.values()) group.tick(now, this.failed);
  }
}
