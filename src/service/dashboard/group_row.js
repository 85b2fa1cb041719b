// A build group in the list (one request, several GPU targets): one row with the
// group's state (GET /groups/{gid}) and its members' progress, that opens into the
// members' own rows and a panel with the Triton manifest and each member's engine.
import { showAlert } from "./alerts.js";
import { api } from "./api.js";
import { confirmGroupCancel, requestGroupCancel } from "./cancel.js";
import { h, setAttr, setText } from "./dom.js";
import { fmtClock, fmtRelative, parseTime, shortId } from "./format.js";
import { ListRow } from "./list_row.js";
import { FINAL, STATUS_TEXT, badge } from "./record.js";

const MAX_MEMBERS = 16;  // a group has at most 16 targets

export class GroupRow {
  // `changed`: the list should read again; `relayout`: the rows to show changed.
  constructor(gid, changed, relayout) {
    Object.assign(this, {gid, changed, relayout});
    this.members = new Map();  // build id -> ListRow
    this.doc = null;           // the group document
    this.expanded = false;
    this.badges = h("td", {"data-label": "Status"});
    this.toggle = h("button.link.group-toggle", {type: "button", "aria-expanded": "false",
      on: {click: () => this.setExpanded(!this.expanded)}});
    this.whatMain = h("span");
    this.whatSub = h("div.activity");
    this.started = h("time");
    this.progress = h("td.num", {"data-label": "Members"});
    this.activity = h("td.activity", {"data-label": "Activity"});
    this.cancel = h("button.danger", {type: "button", text: "Cancel group", hidden: true, on: {click: () => this.onCancel()}});
    this.tr = h("tr.group-row", {dataset: {group: gid}},
      this.badges, h("td", {"data-label": "Build"}, this.toggle),
      h("td.what", {"data-label": "Model"}, this.whatMain, this.whatSub),
      h("td.num", {"data-label": "Started"}, this.started), this.progress, this.activity, h("td", {}, this.cancel));
    this.links = h("div.group-links");
    this.panel = h("tr.group-panel", {dataset: {group: gid}}, h("td", {colspan: "7"}, this.links));
    this.draw();
  }

  // A member's record, from the list or the group's own listing. Reads the group
  // document again when a member's state changed.
  upsertMember(build) {
    let row = this.members.get(build.id);
    const before = row ? row.build.status : null;
    if (!row) { row = new ListRow(build, this.changed); row.tr.classList.add("member"); this.members.set(build.id, row); }
    else row.update(build);
    if (!this.doc) this.draw();  // the members known so far, until the group document is read
    if (before !== build.status) this.readDocument();
    return row;
  }

  // The rows to show, in order: the group, and while open its members (in target order) and links.
  trs() {
    if (!this.expanded) return [this.tr];
    const order = (this.doc && this.doc.targets) || [];
    const rank = (row) => { const i = order.indexOf(row.build.group && row.build.group.target); return i < 0 ? order.length : i; };
    return [this.tr, ...[...this.members.values()].sort((a, b) => rank(a) - rank(b)).map((r) => r.tr), this.panel];
  }

  async setExpanded(open) {
    this.expanded = open;
    setAttr(this.toggle, "aria-expanded", String(open));
    this.draw();
    this.relayout();
    if (!open) return;
    try {  // members beyond the list's loaded pages
      const page = await api(`/builds?group=${encodeURIComponent(this.gid)}&limit=${MAX_MEMBERS}`);
      for (const b of page.builds || []) this.upsertMember(b);
      this.relayout();
    } catch (e) {
      if (e.status !== 401) showAlert(`Could not list the members of group ${this.gid}: ${e.message}`, "group");
    }
  }

  // One read at a time; a change during a read asks for one more.
  async readDocument() {
    if (this.reading) { this.readAgain = true; return; }
    this.reading = true;
    do {
      this.readAgain = false;
      try { this.doc = await api(`/groups/${encodeURIComponent(this.gid)}`); } catch (e) {
        if (e.status !== 401 && e.status !== 404) showAlert(`Could not read group ${this.gid}: ${e.message}`, "group");
      }
    } while (this.readAgain);
    this.reading = false;
    this.draw();
    this.relayout();
  }

  draw() {
    const d = this.doc;
    const members = d ? d.members || [] : [...this.members.values()].map((r) => ({target: r.build.group.target, state: r.build.status}));
    const state = d ? d.state : "queued";
    this.tr.dataset.status = state;
    if (this.badgeKey !== state) { this.badgeKey = state; this.badges.replaceChildren(badge(state)); }
    setText(this.toggle, `${this.expanded ? "▾" : "▸"} Group ${shortId(this.gid)}`);
    setAttr(this.toggle, "title", this.gid);
    setAttr(this.toggle, "aria-label", `Group ${this.gid}: ${members.length} builds; ${this.expanded ? "close" : "open"} its members`);
    const model = d ? d.model : (this.anyMember() && this.anyMember().build.model) || "";
    setText(this.whatMain, (model || "").split("/").pop() || "build group");
    setText(this.whatSub, `targets: ${(d ? d.targets : members.map((m) => m.target)).join(", ")}`);
    const ended = members.filter((m) => FINAL.has(m.state)).length;
    setText(this.progress, `${ended}/${members.length} ended`);
    setText(this.activity, members.map((m) => `${m.target} ${STATUS_TEXT[m.state] || m.state}`).join(" · "));
    this.cancel.hidden = !(state === "queued" || state === "running");
    setAttr(this.cancel, "aria-label", `Cancel group ${this.gid}`);
    this.drawLinks(d);
    this.tick(Date.now(), false);
  }
  anyMember() { return this.members.values().next().value; }

  // The manifest once every member has ended, and each member's engine once it has one.
  drawLinks(d) {
    const base = `/groups/${encodeURIComponent(this.gid)}`;
    const engines = d ? (d.members || []).filter((m) => m.engine_name && m.state === "succeeded") : [];
    const key = (d && d.manifest ? "m" : "") + engines.map((m) => m.engine_name).join(" ");
    if (this.linksKey === key) return;
    this.linksKey = key;
    const parts = [d && d.manifest
      ? h("a.manifest", {href: `${base}/manifest`, download: `${this.gid}.manifest.json`, text: "Triton manifest (cc_model_filenames)"})
      : h("span.muted", {text: "The Triton manifest is ready once every member has ended."})];
    for (const m of engines) {
      parts.push(" · ", h("a.download.engine", {href: `${base}/engines/${encodeURIComponent(m.engine_name)}`, download: m.engine_name,
        text: `${m.target}: ${m.engine_name}`, title: m.compute_capability ? `compute capability ${m.compute_capability}` : ""}));
    }
    this.links.replaceChildren(...parts);
  }

  tick(now, stale) {
    const created = this.doc ? parseTime(this.doc.created_at) : 0;
    setText(this.started, fmtRelative(created, now));
    setAttr(this.started, "title", created ? fmtClock(created) : null);
    for (const row of this.members.values()) row.tick(now, stale);
  }

  async onCancel() {
    if (!this.doc || !(await confirmGroupCancel(this.doc))) { this.cancel.focus(); return; }
    try {
      this.doc = await requestGroupCancel(this.doc);
      this.draw();
    } catch (e) {
      if (e.status !== 401) showAlert(`Could not cancel group ${this.gid}: ${e.message}`, "cancel");
    }
    this.changed();
    this.toggle.focus();
  }
}
