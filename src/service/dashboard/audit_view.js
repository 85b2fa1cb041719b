// The audit trail (/ui/audit): the newest entries of GET /audit — time, user, action,
// target — and older pages on request. Shown to anyone who can load it; the API
// refuses it (403) to all but admins, and the view says so.
import { api } from "./api.js";
import { h, mainEl, setText } from "./dom.js";
import { auditErrorText, auditRow } from "./audit_rows.js";

const PAGE = 50;

export class AuditView {
  constructor() {
    this.before = null;     // next_before of the last page read; null: no older entries
    this.generation = 0;
    this.destroyed = false;
    this.render();
    this.load(false);
  }
  destroy() { this.destroyed = true; }
  tick() {}

  render() {
    this.note = h("p.muted", {role: "status", text: "Reading the audit trail…"});
    this.body = h("tbody");
    this.table = h("table.builds.audit", {hidden: true},
      h("thead", {}, h("tr", {}, ...["Time", "User", "Action", "Target", "Detail"].map((t) => h("th", {scope: "col", text: t})))),
      this.body);
    this.older = h("button.older", {type: "button", hidden: true, text: "Older entries",
      on: {click: () => this.load(true)}});
    mainEl.replaceChildren(h("section.panel", {"aria-labelledby": "audit-title"},
      h("h1", {id: "audit-title", tabindex: "-1", text: "Audit trail"}),
      h("p", {}, h("a", {href: "/", "data-nav": true, text: "← All builds"})),
      this.note, this.table, this.older));
  }

  async load(older) {
    const generation = ++this.generation;
    const query = older && this.before !== null ? `?limit=${PAGE}&before=${this.before}` : `?limit=${PAGE}`;
    let page;
    try {
      page = await api(`/audit${query}`);
    } catch (e) {
      if (this.destroyed || generation !== this.generation || e.status === 401) return;
      setText(this.note, auditErrorText(e.status, e.message));
      return;
    }
    if (this.destroyed || generation !== this.generation) return;
    if (!older) this.body.replaceChildren();
    for (const entry of page.entries || []) this.body.append(rowOf(auditRow(entry)));
    this.before = page.next_before ?? null;
    this.older.hidden = this.before === null;
    this.table.hidden = this.body.children.length === 0;
    setText(this.note, this.body.children.length ? "" : "No entries in the audit trail yet.");
  }
}

function rowOf(r) {
  const target = r.link ? h("a", {href: r.link, "data-nav": true, text: r.target}) : r.target;
  return h("tr", {}, h("td", {text: r.time}), h("td", {text: r.user}), h("td", {}, h("code", {text: r.action})),
    h("td", {}, target), h("td.muted", {text: r.detail}));
}
