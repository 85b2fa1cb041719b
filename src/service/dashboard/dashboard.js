// trtwatch dashboard: the build list and one page per build, served by `trtwatch serve`.
// No framework and no build step: the DOM is built once per view and then updated in
// place (a text node or an attribute at a time), so focus survives updates and a long
// event replay costs one pass over the events plus one small DOM update per frame.
"use strict";
(() => {

// ---------------------------------------------------------------- small helpers

// h("tag.class", {attr: value, text: "...", on: {click: fn}}, ...children)
function h(spec, props, ...children) {
  const [tag, ...classes] = spec.split(".");
  const el = document.createElement(tag);
  if (classes.length) el.className = classes.join(" ");
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "text") el.textContent = value;
    else if (key === "on") for (const [type, fn] of Object.entries(value)) el.addEventListener(type, fn);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key in el && typeof value !== "string") el[key] = value;
    else el.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children) if (child !== null && child !== undefined && child !== false) el.append(child);
  return el;
}
// Sets text only when it changed: no layout work and no lost selection otherwise.
function setText(el, text) { if (el.textContent !== text) el.textContent = text; }
function setAttr(el, name, value) {
  if (value === null || value === undefined) { if (el.hasAttribute(name)) el.removeAttribute(name); }
  else if (el.getAttribute(name) !== String(value)) el.setAttribute(name, value);
}

const FINAL = new Set(["succeeded", "failed", "cancelled", "timed_out", "interrupted"]);
const STATUSES = ["queued", "running", "cancelling", "succeeded", "failed", "cancelled", "timed_out", "interrupted"];
const STATUS_TEXT = {queued: "queued", running: "running", cancelling: "cancelling", succeeded: "succeeded",
  failed: "failed", cancelled: "cancelled", timed_out: "timed out", interrupted: "interrupted", forced: "forced stop"};
const PROFILES = ["small-cnn", "large-transformer", "failing"];
const SILENT_AFTER = 3;  // seconds without a callback before the page says so

function fmtDuration(s) {
  if (s === null || s === undefined || !isFinite(s)) return "—";
  if (s < 0) s = 0;
  if (s < 10) return s.toFixed(1) + " s";
  if (s < 60) return Math.floor(s) + " s";
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(Math.floor(s % 60)).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}
function fmtRelative(ms, now) {
  if (!ms) return "—";
  const s = Math.max(0, (now - ms) / 1000);
  if (s < 5) return "just now";
  if (s < 60) return Math.floor(s) + " s ago";
  if (s < 3600) return Math.floor(s / 60) + " min ago";
  if (s < 86400) return Math.floor(s / 3600) + " h ago";
  if (s < 7 * 86400) return Math.floor(s / 86400) + " d ago";
  return fmtClock(ms).slice(0, 10);
}
// "2026-11-30 09:44:29" in local time. Not Intl: its first use costs tens of milliseconds.
function fmtClock(ms) {
  const d = new Date(ms);
  const two = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}
const fmtCount = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
function fmtBytes(n) {
  if (typeof n !== "number") return null;
  const units = ["B", "KiB", "MiB", "GiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; ++i; }
  return (i ? n.toFixed(1) : String(n)) + " " + units[i];
}
const parseTime = (iso) => (iso ? Date.parse(iso) : 0);
function shortId(id) { return id.length > 14 ? id.slice(0, 12) + "…" : id; }
function whatOf(build) {
  const r = build.request || {};
  if (r.simulate) return {main: r.simulate, sub: `simulated · seed ${r.seed ?? 0} · speed ${r.speed ?? 1}`};
  const model = r.model || build.model || "";
  return {main: model.split("/").pop() || model, sub: model, title: build.model || model};
}
function badge(status, extraClass) {
  return h("span.badge" + (extraClass ? "." + extraClass : ""), {dataset: {status}, text: STATUS_TEXT[status] || status});
}
// Set through the CSSOM: the page's Content-Security-Policy forbids style attributes.
function shareBar(share) {
  const bar = h("span.share");
  bar.style.width = (share * 70).toFixed(1) + "%";
  return bar;
}
// The worker ignored the cooperative cancel and was killed after the grace period.
function forcedStop(build) { return Boolean(build.cancel && build.cancel.stop === "forced") || build.exit_signal === 9; }

// ---------------------------------------------------------------- alerts and connection

const alerts = document.getElementById("alerts");
const connection = document.getElementById("connection");
function showAlert(message, key) {
  for (const old of alerts.children) if (key && old.dataset.key === key) old.remove();
  const close = h("button.link", {type: "button", text: "Dismiss", "aria-label": "Dismiss this message"});
  const box = h("div.alert", {dataset: {key: key || ""}}, h("p", {text: message}), close);
  close.addEventListener("click", () => box.remove());
  alerts.append(box);
}
function clearAlert(key) { for (const old of [...alerts.children]) if (old.dataset.key === key) old.remove(); }

const CONNECTION_TEXT = {connecting: "Connecting…", live: "Live", reconnecting: "Reconnecting…",
  offline: "Offline — retrying", "signed-out": "Signed out"};
let connectionState = "connecting";
function setConnection(state, detail) {
  connectionState = state;
  setAttr(connection, "data-state", state);
  setText(connection, detail || CONNECTION_TEXT[state]);
  document.body.classList.toggle("is-offline", state === "offline" || state === "reconnecting");
}

// ---------------------------------------------------------------- API

class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}
// fetch + JSON; 401 opens the sign-in form; a network failure marks the page offline.
async function api(path, options = {}) {
  let res;
  try {
    res = await fetch(path, {cache: "no-store", ...options,
      headers: {Accept: "application/json", ...(options.body ? {"Content-Type": "application/json"} : {}), ...options.headers}});
  } catch (e) {
    setConnection("offline", "Offline — cannot reach trtwatch serve");
    throw new ApiError(0, "cannot reach the trtwatch service (is `trtwatch serve` running?)");
  }
  const text = await res.text();
  let body = null;
  try { body = text ? JSON.parse(text) : null; } catch (e) { body = null; }
  if (res.status === 401 && path !== "/ui/session") {
    requireSignIn();
    throw new ApiError(401, "sign in with the server's token");
  }
  if (!res.ok) throw new ApiError(res.status, (body && body.error) || `${res.status} ${res.statusText}`);
  if (connectionState !== "live" && connectionState !== "signed-out") setConnection("live");
  return body;
}

// Does this server offer GET /builds/{id}/trace? Read once from its OpenAPI document.
let traceSupport = null;
function hasTraceEndpoint() {
  if (!traceSupport) {
    traceSupport = api("/openapi.json").then((doc) => Boolean(doc && doc.paths && doc.paths["/builds/{id}/trace"]),
      () => { traceSupport = null; return false; });
  }
  return traceSupport;
}

// ---------------------------------------------------------------- event stream

const SLICE_MS = 8;
const yieldToBrowser = () => (globalThis.scheduler && scheduler.yield ? scheduler.yield()
  : new Promise((resolve) => setTimeout(resolve, 0)));

// Server-Sent Events over fetch: unlike EventSource it can resume with Last-Event-ID on
// a connection of its own making (after an outage or a sign-in), tells 204 / 401 / 404
// apart, and hands each network chunk over as one batch of events.
class EventStream {
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
    if (res.status === 401) { this.handlers.onState("signed-out"); requireSignIn(); return; }
    if (!res.ok) {
      let message = `${res.status} ${res.statusText}`;
      try { message = (await res.json()).error || message; } catch (e) { /* not JSON */ }
      if (res.status >= 500) { this.retryLater(); return; }
      this.handlers.onError(res.status, message);
      return;
    }
    this.failures = 0;
    performance.mark("trtwatch:stream-open");
    this.handlers.onState("live");
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    try {
      for (;;) {
        const {done, value} = await reader.read();
        if (done || this.closed) break;
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
    } catch (e) {
      if (this.closed) return;
    }
    if (this.closed) return;
    if (this.handlers.finished()) { this.handlers.onEnd(); return; }
    this.retryLater();  // cut off before build_finish: resume after the last id
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

// ---------------------------------------------------------------- cancel dialog

const cancelDialog = document.getElementById("cancel-dialog");
// Asks before cancelling; resolves true when the user confirms.
function confirmCancel(build) {
  const what = whatOf(build);
  setText(document.getElementById("cancel-text"),
    `Cancel build ${build.id} (${what.main})? TensorRT stops at its next progress step; ` +
    "the record, its events and the cancel reason are kept.");
  document.getElementById("cancel-confirm").setAttribute("aria-label", `Cancel build ${build.id}`);
  cancelDialog.returnValue = "";
  return new Promise((resolve) => {
    cancelDialog.addEventListener("close", () => resolve(cancelDialog.returnValue === "cancel"), {once: true});
    cancelDialog.showModal();
    document.getElementById("cancel-keep").focus();
  });
}
async function requestCancel(build) {
  return api(`/builds/${encodeURIComponent(build.id)}/cancel`, {method: "POST"});
}

// ---------------------------------------------------------------- sign-in

const mainEl = document.getElementById("main");
const signOutButton = document.getElementById("sign-out");
let current = null;  // the view on screen
let signingIn = false;

function requireSignIn() {
  if (signingIn) return;
  signingIn = true;
  if (current) current.destroy();
  current = null;
  setConnection("signed-out");
  const input = h("input", {type: "password", id: "token", name: "token", autocomplete: "current-password",
    required: true, "aria-describedby": "token-help"});
  const error = h("p.form-error", {role: "alert"});
  const form = h("form", {on: {submit: async (e) => {
    e.preventDefault();
    setText(error, "");
    try {
      await api("/ui/session", {method: "POST", body: JSON.stringify({token: input.value.trim()})});
      signingIn = false;
      input.value = "";
      signOutButton.hidden = false;
      setConnection("connecting");
      route();
    } catch (err) {
      setText(error, err.status === 401 ? "That token is not the server's. Check the --token-file it was started with."
        : err.message);
      input.focus();
    }
  }}},
  h("label", {for: "token", text: "Access token"}), input,
  h("p.muted", {id: "token-help", text: "This server was started with --token-file. Paste the token from that file; " +
    "it is exchanged for a browser session cookie and is not stored by this page."}),
  error, h("button.primary", {type: "submit", text: "Sign in"}));
  mainEl.replaceChildren(h("section.panel.signin", {"aria-labelledby": "signin-title"},
    h("h1", {id: "signin-title", text: "Sign in to trtwatch"}), form));
  input.focus();
}
signOutButton.addEventListener("click", async () => {
  try { await api("/ui/session", {method: "DELETE"}); } catch (e) { /* signed out anyway */ }
  signOutButton.hidden = true;
  requireSignIn();
});

// ---------------------------------------------------------------- the build list

const PAGE = 25;

class ListView {
  constructor() {
    const params = new URLSearchParams(location.search);
    this.filter = new Set((params.get("status") || "").split(",").filter((s) => STATUSES.includes(s)));
    this.rows = new Map();      // id -> row
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
    this.more = h("button", {type: "button", hidden: true, text: "Load older builds",
      on: {click: () => this.loadOlder()}});
    const chips = STATUSES.map((s) => h("label.chip", {},
      h("input", {type: "checkbox", value: s, checked: this.filter.has(s), on: {change: (e) => this.toggle(s, e.target.checked)}}),
      STATUS_TEXT[s]));
    mainEl.replaceChildren(
      h("h1", {text: "Builds", tabindex: "-1"}),
      new SubmitForm().element,
      h("div.toolbar", {}, h("fieldset.filters", {}, h("legend", {text: "Status"}), ...chips)),
      this.table, this.empty, h("div.more", {}, this.more));
  }
  toggle(status, on) {
    if (on) this.filter.add(status); else this.filter.delete(status);
    const query = this.filter.size ? "?status=" + [...this.filter].join(",") : "";
    history.replaceState(null, "", "/" + query);
    for (const row of this.rows.values()) row.tr.remove();
    this.rows.clear();
    this.firstPage = [];
    this.older = [];
    this.cursor = undefined;
    this.refresh();
  }
  query(cursor) {
    const q = new URLSearchParams({limit: String(PAGE)});
    if (this.filter.size) q.set("status", [...this.filter].join(","));
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
    let row = this.rows.get(build.id);
    if (!row) { row = new ListRow(build, () => this.refresh()); this.rows.set(build.id, row); }
    else row.update(build);
  }
  // Puts rows in order, moving only those out of place (a moved row would lose focus).
  order() {
    const ids = [...this.firstPage, ...this.older];
    let at = this.tbody.firstChild;
    for (const id of ids) {
      const tr = this.rows.get(id).tr;
      if (tr === at) { at = at.nextSibling; continue; }
      this.tbody.insertBefore(tr, at);
    }
    this.empty.hidden = ids.length > 0;
    if (!ids.length) setText(this.empty, this.filter.size ? "No builds with these statuses." : "No builds yet. Submit one above, or POST /builds.");
    this.more.hidden = !this.cursor;
  }
  tick() {
    const now = Date.now();
    for (const row of this.rows.values()) row.tick(now, this.failed);
  }
}

class ListRow {
  constructor(build, changed) {
    this.changed = changed;
    this.badges = h("td", {"data-label": "Status"});
    this.link = h("a.build-link", {"data-nav": true});
    this.whatMain = h("span");
    this.whatSub = h("div.activity");
    this.started = h("time");
    this.duration = h("td.num", {"data-label": "Duration"});
    this.activity = h("td.activity", {"data-label": "Activity"});
    this.cancel = h("button.danger", {type: "button", text: "Cancel", on: {click: () => this.onCancel()}});
    this.tr = h("tr", {},
      this.badges,
      h("td", {"data-label": "Build"}, this.link),
      h("td.what", {"data-label": "Model"}, this.whatMain, this.whatSub),
      h("td.num", {"data-label": "Started"}, this.started),
      this.duration, this.activity,
      h("td", {}, this.cancel));
    this.update(build);
  }
  update(build) {
    this.build = build;
    const status = build.status;
    const key = status + (forcedStop(build) ? "+forced" : "");
    if (this.badgeKey !== key) {
      this.badgeKey = key;
      this.badges.replaceChildren(badge(status), forcedStop(build) ? badge("forced") : "");
    }
    this.tr.dataset.status = status;
    this.tr.dataset.id = build.id;
    setAttr(this.link, "href", `/ui/builds/${build.id}`);
    setText(this.link, shortId(build.id));
    setAttr(this.link, "title", build.id);
    setAttr(this.link, "aria-label", `Build ${build.id}`);
    const what = whatOf(build);
    setText(this.whatMain, what.main);
    setText(this.whatSub, what.sub === what.main ? "" : what.sub);
    const startedMs = parseTime(build.started_at) || parseTime(build.created_at);
    setAttr(this.started, "datetime", build.started_at || build.created_at);
    setAttr(this.started, "title", fmtClock(startedMs));
    const active = build.phase && Array.isArray(build.phase.active) ? build.phase.active : [];
    let deepest = null;
    for (const p of active) if (!deepest || p.depth >= deepest.depth) deepest = p;
    const root = active.find((p) => p.depth === 0);
    let activity = "";
    if (FINAL.has(status)) activity = build.error ? build.error.split("\n")[0] : "";
    else if (status === "queued") activity = "waiting for a build slot";
    else if (deepest) {
      activity = `${deepest.phase} ${deepest.done}/${deepest.total}`;
      if (root && root !== deepest) activity = `${root.phase} ${root.done}/${root.total} › ${activity}`;
    }
    if (status === "cancelling") activity = "cancelling — waiting for the current step" + (activity ? ` (${activity})` : "");
    setText(this.activity, activity.length > 160 ? activity.slice(0, 157) + "…" : activity);
    setAttr(this.activity, "title", activity.length > 160 ? activity : null);
    const cancellable = status === "queued" || status === "running";
    this.cancel.hidden = !cancellable;
    setAttr(this.cancel, "aria-label", `Cancel build ${build.id} (${what.main})`);
    this.tick(Date.now(), false);
  }
  tick(now, stale) {
    const b = this.build;
    setText(this.started, fmtRelative(parseTime(b.started_at) || parseTime(b.created_at), now));
    const started = parseTime(b.started_at);
    let text;
    if (FINAL.has(b.status)) text = started ? fmtDuration((parseTime(b.finished_at) - started) / 1000) : "—";
    else if (b.status === "queued") text = "waiting " + fmtDuration((now - parseTime(b.created_at)) / 1000);
    else text = started ? fmtDuration((now - started) / 1000) + (stale ? " (last known)" : "") : "—";
    setText(this.duration, text);
  }
  async onCancel() {
    if (!(await confirmCancel(this.build))) { this.cancel.focus(); return; }
    try {
      this.update(await requestCancel(this.build));
    } catch (e) {
      if (e.status !== 401) showAlert(`Could not cancel ${this.build.id}: ${e.message}`, "cancel");
    }
    this.changed();
    this.link.focus();
  }
}

// ---------------------------------------------------------------- submit form

class SubmitForm {
  constructor() {
    const field = (label, input) => h("label", {}, label, input);
    this.kind = h("select", {name: "kind"}, h("option", {value: "simulate", text: "Simulated (no GPU)"}),
      h("option", {value: "model", text: "ONNX model in a model root"}));
    this.profile = h("input", {name: "simulate", list: "profiles", value: "small-cnn", required: true});
    this.seed = h("input", {name: "seed", type: "number", min: "0", step: "1", placeholder: "0"});
    this.speed = h("input", {name: "speed", type: "number", min: "0.01", max: "1000", step: "any", placeholder: "1"});
    this.model = h("input", {name: "model", placeholder: "resnet50/model.onnx"});
    this.flags = ["fp16", "bf16", "int8", "verbose"].map((name) => h("input", {type: "checkbox", name}));
    this.workspace = h("input", {name: "workspace", type: "number", min: "1", placeholder: "MiB"});
    this.extra = h("input", {name: "options", placeholder: '{"timing-cache": "cache.bin"}'});
    this.timeout = h("input", {name: "timeout", placeholder: "30m, 90s, 2h"});
    this.error = h("p.form-error", {role: "alert"});
    this.button = h("button.primary", {type: "submit", text: "Start build"});
    this.simFields = h("div.form-grid", {}, field("Profile", this.profile), field("Seed", this.seed), field("Speed ×", this.speed));
    this.modelFields = h("div.form-grid", {hidden: true}, field("Model (.onnx, relative to a model root)", this.model),
      h("div.field", {}, "Precision and logging", h("div.checks", {}, ...this.flags.map((f) => h("label", {}, f, f.name)))),
      field("Workspace (MiB)", this.workspace), field("More options (JSON object)", this.extra));
    this.kind.addEventListener("change", () => {
      const sim = this.kind.value === "simulate";
      this.simFields.hidden = !sim;
      this.modelFields.hidden = sim;
      this.profile.required = sim;
      this.model.required = !sim;
    });
    this.element = h("details.panel.submit", {},
      h("summary", {text: "New build"}),
      h("form", {on: {submit: (e) => this.submit(e)}},
        h("div.form-grid", {}, field("Kind", this.kind), field("Time budget", this.timeout)),
        this.simFields, this.modelFields,
        h("datalist", {id: "profiles"}, ...PROFILES.map((p) => h("option", {value: p}))),
        this.error, this.button));
  }
  request() {
    const body = {};
    if (this.kind.value === "simulate") {
      body.simulate = this.profile.value.trim();
      if (this.seed.value !== "") body.seed = Number(this.seed.value);
      if (this.speed.value !== "") body.speed = Number(this.speed.value);
    } else {
      body.model = this.model.value.trim();
      const options = {};
      if (this.extra.value.trim()) {
        let extra;
        try { extra = JSON.parse(this.extra.value); } catch (e) { throw new Error("More options must be a JSON object, e.g. {\"maxThreads\": 4}"); }
        if (!extra || typeof extra !== "object" || Array.isArray(extra)) throw new Error("More options must be a JSON object");
        Object.assign(options, extra);
      }
      for (const f of this.flags) if (f.checked) options[f.name] = true;
      if (this.workspace.value !== "") options.workspace = Number(this.workspace.value);
      if (Object.keys(options).length) body.options = options;
    }
    if (this.timeout.value.trim()) body.timeout = this.timeout.value.trim();
    return body;
  }
  async submit(e) {
    e.preventDefault();
    setText(this.error, "");
    this.button.disabled = true;
    try {
      const build = await api("/builds", {method: "POST", body: JSON.stringify(this.request())});
      navigate(`/ui/builds/${build.id}`);
    } catch (err) {
      if (err.status === 429) setText(this.error, "The queue is full (429): wait for builds to finish, or cancel some.");
      else if (err.status !== 401) setText(this.error, err.message);
    } finally {
      this.button.disabled = false;
    }
  }
}

// ---------------------------------------------------------------- one build

// Phases deeper than this are dropped from the page once they finish (there are
// thousands in a large build); the top of the tree stays as a list of finished steps.
const KEEP_FINISHED_DEPTH = 1;

class BuildView {
  constructor(id) {
    this.id = id;
    this.record = null;
    this.events = [];           // raw JSON text of every event, for the log view
    this.phases = new Map();    // phase id -> phase (active ones, and the kept finished ones)
    this.dirty = new Set();     // phases whose row needs drawing
    this.summary = new Map();   // phase name -> {count, total, self, max, early}
    this.start = null;          // build_start
    this.finish = null;         // build_finish
    this.cancelEvent = null;
    this.lastActivityT = 0;     // t of the last progress callback seen
    this.lastT = 0;
    this.lastSeq = 0;
    this.anchor = Infinity;     // performance.now() - t*1000, smallest seen: when t was 0 here
    this.frame = 0;
    this.summaryAt = 0;
    this.logAt = 0;
    this.streamEnded = false;
    this.destroyed = false;
    performance.mark("trtwatch:watch-start");
    this.render();
    this.loadRecord();
    this.stream = new EventStream(`/builds/${encodeURIComponent(id)}/events`, {
      onEvents: (batch) => this.onEvents(batch),
      onState: (state) => this.onStreamState(state),
      onEnd: () => this.onStreamEnd(),
      onError: (status, message) => { if (status !== 404) showAlert(`Event stream: ${message}`, "stream"); },
      finished: () => this.finish !== null,
    });
    this.recordTimer = setInterval(() => { if (this.record && !FINAL.has(this.record.status)) this.loadRecord(); }, 5000);
  }
  destroy() {
    this.destroyed = true;
    if (this.stream) this.stream.close();
    clearInterval(this.recordTimer);
    cancelAnimationFrame(this.frame);
  }

  render() {
    document.title = `${shortId(this.id)} · trtwatch`;
    const fact = (label, key) => {
      const dd = h("dd", {dataset: {fact: key}});
      this.factsEl.append(h("div", {}, h("dt", {text: label}), dd));
      return dd;
    };
    this.badges = h("span");
    this.cancelButton = h("button.danger.solid", {type: "button", text: "Cancel build", hidden: true,
      "aria-label": `Cancel build ${this.id}`, on: {click: () => this.onCancel()}});
    this.liveLine = h("p.live-line", {role: "status", "aria-live": "polite"});
    this.errorBox = h("pre.error-box", {hidden: true});
    this.factsEl = h("dl.facts");
    this.f = {
      what: fact("Model or profile", "what"), backend: fact("Backend", "backend"), elapsed: fact("Elapsed", "elapsed"),
      created: fact("Submitted", "created"), started: fact("Started", "started"), finished: fact("Finished", "finished"),
      cancel: fact("Cancel", "cancel"), latency: fact("Cancel latency", "latency"), engine: fact("Engine", "engine"),
      worker: fact("Worker", "worker"), events: fact("Events", "events"),
    };
    this.requestEl = h("pre.log.request");
    this.tree = h("ul.tree", {"aria-label": "Phases"});
    this.treeEmpty = h("p.tree-empty", {text: "No phase has started yet."});
    this.summaryBody = h("tbody");
    this.summaryEl = h("section.panel", {"aria-labelledby": "summary-title", hidden: true},
      h("h2", {id: "summary-title", text: "Where the time went"}),
      h("p.muted", {text: "Per phase name: total time (with children) and self time (without them); " +
        "the phases with the most self time are the bottlenecks."}),
      h("table.summary", {}, h("thead", {}, h("tr", {},
        h("th", {scope: "col", text: "Phase"}), h("th.num", {scope: "col", text: "Count"}),
        h("th.num", {scope: "col", text: "Total"}), h("th.num", {scope: "col", text: "Self"}),
        h("th.share-cell", {scope: "col", text: "Share of all self time"}))), this.summaryBody));
    this.logFilter = h("select", {"aria-label": "Which events to show", on: {change: () => this.drawLog()}},
      h("option", {value: "all", text: "All events"}), h("option", {value: "structure", text: "Without steps"}),
      h("option", {value: "logs", text: "Log lines, stalls and cancellation"}));
    this.logCount = h("span.muted");
    this.logPre = h("pre.log", {tabindex: "0", "aria-label": "Event log"});
    this.logDetails = h("details.panel", {on: {toggle: () => this.drawLog()}},
      h("summary", {text: "Event log"}),
      h("div.log-tools", {}, this.logFilter, this.logCount,
        h("button", {type: "button", text: "Download events (.jsonl)", on: {click: () => this.downloadEvents()}})),
      this.logPre);
    this.downloads = h("p");
    mainEl.replaceChildren(
      h("p", {}, h("a", {href: "/", "data-nav": true, text: "← All builds"})),
      h("section.panel", {"aria-labelledby": "build-title"},
        h("div.head", {}, h("h1", {id: "build-title", tabindex: "-1", text: this.id}), this.badges,
          h("span.spacer"), this.cancelButton),
        this.liveLine, this.errorBox),
      h("section.panel", {"aria-label": "Facts"}, this.factsEl, this.downloads),
      h("section.panel", {"aria-labelledby": "tree-title"}, h("h2", {id: "tree-title", text: "Phases"}), this.treeEmpty, this.tree),
      this.summaryEl,
      h("details.panel", {}, h("summary", {text: "Request and options"}), this.requestEl),
      this.logDetails);
  }

  async loadRecord() {
    try {
      const record = await api(`/builds/${encodeURIComponent(this.id)}`);
      if (this.destroyed) return;
      // A record fetched before our cancel answered must not undo the cancelling state.
      if (this.record && this.record.status === "cancelling" && (record.status === "running" || record.status === "queued")) return;
      this.record = record;
      clearAlert("record");
      this.schedule();
    } catch (e) {
      if (this.destroyed || e.status === 401) return;
      if (e.status === 404 && !this.record) {
        mainEl.replaceChildren(h("section.panel", {}, h("h1", {text: "No such build"}),
          h("p", {text: `${e.message}.`}), h("a", {href: "/", "data-nav": true, text: "All builds"})));
        mainEl.dataset.status = "missing";
        this.destroy();
        return;
      }
      showAlert(`Could not load build ${this.id}: ${e.message}`, "record");
    }
  }

  // ---- events -> model (no DOM work here)
  onEvents(batch) {
    const arrived = performance.now();
    for (const e of batch) this.apply(e);
    const last = batch[batch.length - 1];
    if (typeof last.t === "number") this.anchor = Math.min(this.anchor, arrived - last.t * 1000);
    if (this.recordStale) { this.recordStale = false; this.loadRecord(); }
    this.schedule();
  }
  apply(e) {
    this.events.push(e.raw);
    if (typeof e.seq === "number") this.lastSeq = e.seq;
    if (typeof e.t === "number" && e.t > this.lastT) this.lastT = e.t;
    switch (e.type) {
      case "build_start": this.start = e; break;
      case "phase_start": {
        const parent = this.phases.get(e.parent) || null;
        const p = {id: e.id, name: e.phase, total: e.total, done: 0, start: e.t, end: null, early: false,
          parent, depth: parent ? parent.depth + 1 : 0, li: null, row: null, kids: null, spans: []};
        this.phases.set(e.id, p);
        this.dirty.add(p);
        this.lastActivityT = e.t;
        break;
      }
      case "step": {
        const p = this.phases.get(e.id);
        if (p) { p.done = Math.max(p.done, e.step + 1); this.dirty.add(p); }
        this.lastActivityT = e.t;
        break;
      }
      case "phase_finish": {
        const p = this.phases.get(e.id);
        this.lastActivityT = e.t;
        if (!p) break;
        p.end = e.t;
        p.done = e.completed;
        p.early = Boolean(e.early);
        p.elapsed = typeof e.elapsed === "number" ? e.elapsed : e.t - p.start;
        this.account(p);
        if (p.depth > KEEP_FINISHED_DEPTH) {
          this.phases.delete(p.id);
          this.dirty.delete(p);
          if (p.li) p.li.remove();
        } else {
          this.dirty.add(p);
        }
        break;
      }
      // The worker only knows it got SIGTERM; the record has who cancelled and why.
      case "cancel_requested": this.cancelEvent = e; this.recordStale = true; break;
      case "log": if (e.severity === "error" || e.severity === "internal_error") this.lastError = e.message; break;
      case "build_finish":
        this.finish = e;
        this.lastActivityT = e.t;
        break;
      default: break;
    }
  }
  // Self time = elapsed minus the union of the children's intervals (children on
  // several builder threads overlap).
  account(p) {
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
    let s = this.summary.get(p.name);
    if (!s) { s = {name: p.name, count: 0, total: 0, self: 0, max: 0, early: 0}; this.summary.set(p.name, s); }
    ++s.count; s.total += p.elapsed; s.self += self; s.max = Math.max(s.max, p.elapsed); if (p.early) ++s.early;
    this.summaryDirty = true;
  }

  // ---- model -> DOM, at most once per frame
  schedule() {
    if (!this.frame && !this.destroyed) this.frame = requestAnimationFrame(() => { this.frame = 0; this.draw(); });
  }
  draw() {
    for (const p of this.dirty) this.drawPhase(p);
    this.dirty.clear();
    this.treeEmpty.hidden = this.tree.firstChild !== null;
    setText(this.treeEmpty, this.finish ? "No phases." : "No phase has started yet.");
    this.drawHeader();
    const now = performance.now();
    if (this.summaryDirty && (this.finish || now - this.summaryAt > 1000)) { this.drawSummary(); this.summaryAt = now; }
    if (this.logDetails.open && (this.finish || now - this.logAt > 1000)) this.drawLog();
    if (this.isFinal() && (this.finish || this.streamEnded) && !this.finalShown) {
      this.finalShown = true;
      performance.mark("trtwatch:final-shown");
      performance.measure("trtwatch:replay", "trtwatch:watch-start", "trtwatch:final-shown");
      mainEl.dataset.final = "true";
    }
  }
  ensureLi(p) {
    if (p.li) return p.li;
    p.name_el = h("span.name", {text: p.name, title: p.name});
    p.bar = h("progress", {max: p.total, value: 0, "aria-label": `${p.name} progress`});
    p.count_el = h("span.count");
    p.el_el = h("span.el");
    p.li = h("li", {dataset: {phase: p.id}}, h("div.ph", {}, p.name_el, p.bar, p.count_el, p.el_el));
    let container = this.tree;
    if (p.parent && this.phases.has(p.parent.id)) {
      const parentLi = this.ensureLi(p.parent);
      if (!p.parent.kids) { p.parent.kids = h("ul"); parentLi.append(p.parent.kids); }
      container = p.parent.kids;
    }
    container.append(p.li);
    return p.li;
  }
  drawPhase(p) {
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
      setText(p.el_el, fmtDuration(Math.max(0, this.nowT() - p.start)));
    }
  }
  status() {
    const r = this.record;
    if (r && FINAL.has(r.status)) return r.status;
    if (this.finish) return this.finish.status;
    if (this.cancelEvent && r && r.status === "running") return "cancelling";
    return r ? r.status : "queued";
  }
  isFinal() { return FINAL.has(this.status()); }
  // Seconds since the build started, on the event clock.
  nowT() {
    if (this.finish) return this.finish.elapsed;
    const r = this.record;
    if (r && FINAL.has(r.status)) return r.started_at ? (parseTime(r.finished_at) - parseTime(r.started_at)) / 1000 : this.lastT;
    let t = this.lastT;
    if (this.anchor !== Infinity) t = Math.max(t, (performance.now() - this.anchor) / 1000);
    if (r && r.started_at && r.status !== "queued") t = Math.max(t, (Date.now() - parseTime(r.started_at)) / 1000);
    return t;
  }
  drawHeader() {
    const r = this.record;
    if (!r) return;
    const status = this.status();
    const key = status + (forcedStop(r) ? "+forced" : "");
    if (this.badgeKey !== key) {
      this.badgeKey = key;
      this.badges.replaceChildren(badge(status), forcedStop(r) ? badge("forced") : "");
    }
    mainEl.dataset.status = status;
    this.cancelButton.hidden = !(status === "queued" || status === "running");
    const what = whatOf(r);
    setText(this.f.what, what.sub && what.sub !== what.main ? `${what.main} (${what.sub})` : what.main);
    const facts = this.start && this.start.facts ? Object.entries(this.start.facts).filter(([k]) => k !== "simulated")
      .map(([k, v]) => `${k}: ${v}`).join(" · ") : "";
    setText(this.f.backend, (r.backend || "—") + (facts ? ` — ${facts}` : ""));
    const now = Date.now();
    const when = (iso) => (iso ? `${fmtClock(parseTime(iso))} (${fmtRelative(parseTime(iso), now)})` : "—");
    setText(this.f.created, when(r.created_at));
    setText(this.f.started, when(r.started_at));
    setText(this.f.finished, when(r.finished_at));
    setText(this.f.elapsed, status === "queued" ? "not started" : fmtDuration(this.nowT()) + (FINAL.has(status) ? "" : " so far"));
    const cancel = r.cancel || (this.cancelEvent ? {reason: this.cancelEvent.reason, message: this.cancelEvent.message} : null);
    mainEl.dataset.cancelReason = cancel ? cancel.reason : "";
    const stop = r.cancel && r.cancel.stop ? ` (${r.cancel.stop} stop)` : "";
    setText(this.f.cancel, cancel ? `${cancel.reason}${cancel.message ? ": " + cancel.message : ""}${stop}` : "—");
    const latency = (r.cancel && r.cancel.latency) || (this.finish && this.finish.cancel_latency);
    let latencyText = "—";
    if (latency) {
      latencyText = `stopped ${fmtDuration(latency.to_return)} after the request`;
      if (latency.to_first_false !== null && latency.to_first_false !== undefined) latencyText += ` (first refusal after ${fmtDuration(latency.to_first_false)})`;
    }
    if (this.cancelShownMs !== undefined) latencyText += `; this page showed “cancelling” ${Math.round(this.cancelShownMs)} ms after the click`;
    setText(this.f.latency, latencyText);
    const size = fmtBytes(r.engine_bytes ?? r.engine_size);
    setText(this.f.engine, r.engine ? r.engine + (size ? ` (${size})` : "") : FINAL.has(status) ? "none" : "not yet");
    const exit = r.exit_signal ? `killed by signal ${r.exit_signal}` : r.exit_code !== null && r.exit_code !== undefined ? `exit code ${r.exit_code}` : "";
    setText(this.f.worker, [r.worker_pid ? `pid ${r.worker_pid}` : "", exit].filter(Boolean).join(", ") || "—");
    setText(this.f.events, fmtCount(this.events.length) +
      (this.lastSeq > this.events.length ? ` received (up to #${this.lastSeq}; steps are coalesced)` : ""));
    mainEl.dataset.lastSeq = String(this.lastSeq || 0);
    mainEl.dataset.events = String(this.events.length);
    this.requestText = this.requestText || JSON.stringify(r.request || {}, null, 2);
    setText(this.requestEl, this.requestText);
    const error = r.error || (this.finish && this.finish.error) || (FINAL.has(status) ? null : this.lastError);
    this.errorBox.hidden = !error;
    if (error) setText(this.errorBox, error);
    this.drawLiveLine(status);
    if (FINAL.has(status) && !this.downloadsDrawn) this.drawDownloads();
  }
  deepestActive() {
    let deepest = null;
    for (const p of this.phases.values()) if (p.end === null && (!deepest || p.depth >= deepest.depth)) deepest = p;
    return deepest;
  }
  drawLiveLine(status) {
    let text = "";
    let kind = "";
    const p = this.deepestActive();
    const where = p ? `“${p.name}” ${p.done}/${p.total}` : "";
    if (status === "queued") text = "Queued — waiting for a free build slot.";
    else if (status === "cancelling") {
      kind = "cancelling";
      text = "Cancelling — waiting for TensorRT to finish the current step…";
      if (this.cancelEvent) text += ` (requested ${fmtDuration(Math.max(0, this.nowT() - this.cancelEvent.t))} ago)`;
    } else if (status === "running") {
      const silent = this.nowT() - this.lastActivityT;
      if (this.start && silent >= SILENT_AFTER && connectionState === "live") {
        kind = "silent";
        text = `Last activity ${Math.floor(silent)} s ago — TensorRT is inside one step${where ? " of " + where : ""}.`;
      } else if (connectionState !== "live") {
        kind = "silent";
        text = "Connection lost — the state below is the last one received; reconnecting…";
      } else {
        text = where ? `Running: ${where}` : "Starting…";
      }
    } else if (FINAL.has(status)) {
      const took = fmtDuration(this.nowT());
      const cancel = (this.record && this.record.cancel) || this.cancelEvent;
      text = {
        succeeded: `Succeeded in ${took}.`,
        failed: `Failed after ${took}.`,
        cancelled: `Cancelled after ${took}` + (cancel ? ` — reason: ${cancel.reason}${cancel.message ? " (" + cancel.message + ")" : ""}.` : "."),
        timed_out: `Timed out after ${took}.`,
        interrupted: "Interrupted: the service stopped while this build ran.",
      }[status];
    }
    setText(this.liveLine, text);
    setAttr(this.liveLine, "data-kind", kind);
  }
  drawSummary() {
    this.summaryDirty = false;
    const all = [...this.summary.values()];
    const rows = all.sort((a, b) => b.self - a.self).slice(0, 12);
    // Builder threads overlap, so shares are of all self time, not of the wall clock.
    const whole = Math.max(all.reduce((sum, s) => sum + s.self, 0), 1e-9);
    this.summaryEl.hidden = rows.length === 0;
    this.summaryBody.replaceChildren(...rows.map((s, i) => {
      const share = Math.min(1, s.self / whole);
      return h("tr" + (i < 3 && share >= 0.1 ? ".bottleneck" : ""), {},
        h("td", {text: s.name + (s.early ? ` (${s.early} early)` : "")}),
        h("td.num", {text: String(s.count)}), h("td.num", {text: fmtDuration(s.total)}),
        h("td.num", {text: fmtDuration(s.self)}),
        h("td.share-cell", {}, shareBar(share), ` ${Math.round(share * 100)} %`));
    }));
  }
  async drawDownloads() {
    this.downloadsDrawn = true;
    if (!(await hasTraceEndpoint()) || this.destroyed) return;
    this.downloads.replaceChildren(h("a", {href: `/builds/${encodeURIComponent(this.id)}/trace`, download: `${this.id}.trace.json`,
      text: "Download the Chrome trace"}), " — open it in Perfetto (ui.perfetto.dev) or chrome://tracing.");
  }
  drawLog() {
    this.logAt = performance.now();
    if (!this.logDetails.open) return;
    const filter = this.logFilter.value;
    const keep = filter === "all" ? null : filter === "structure" ? /"type":"(?!step")/ : /"type":"(log|stall|cancel_requested|build_finish)"/;
    const limit = 2000;
    const lines = [];
    let matched = 0;
    for (let i = this.events.length - 1; i >= 0; --i) {
      const raw = this.events[i];
      if (keep && !keep.test(raw)) continue;
      if (++matched <= limit) lines.push(raw);
    }
    lines.reverse();
    setText(this.logCount, matched > limit ? `the last ${limit} of ${matched} events` : `${matched} events`);
    setText(this.logPre, lines.join("\n"));
  }
  downloadEvents() {
    const url = URL.createObjectURL(new Blob([this.events.join("\n") + "\n"], {type: "application/jsonl"}));
    const a = h("a", {href: url, download: `${this.id}.events.jsonl`});
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  }

  onStreamState(state) {
    setConnection(state);
    this.schedule();
  }
  // The stream is over: the record has the final word (an interrupted build's stream
  // says failed; the record says interrupted).
  async onStreamEnd() {
    this.streamEnded = true;
    setConnection("live", "Live");
    for (let i = 0; i < 20 && !this.destroyed; ++i) {
      await this.loadRecord();
      if (this.record && FINAL.has(this.record.status)) break;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  async onCancel() {
    if (!(await confirmCancel(this.record))) { this.cancelButton.focus(); return; }
    const clicked = performance.now();
    const previous = this.record;
    this.record = {...this.record, status: "cancelling"};
    this.drawHeader();
    this.cancelShownMs = performance.now() - clicked;
    document.getElementById("build-title").focus();
    try {
      const answer = await requestCancel(previous);
      this.record = answer;
    } catch (e) {
      this.record = previous;
      if (e.status === 409) await this.loadRecord();
      else if (e.status !== 401) showAlert(`Could not cancel: ${e.message}`, "cancel");
    }
    this.schedule();
  }
  tick() {
    if (!this.record) return;
    for (const p of this.phases.values()) if (p.end === null && p.li) setText(p.el_el, fmtDuration(Math.max(0, this.nowT() - p.start)));
    this.drawHeader();
  }
}

// ---------------------------------------------------------------- routing

function route() {
  if (signingIn) return;
  if (current) current.destroy();
  const match = location.pathname.match(/^\/ui\/builds\/([^/]+)$/);
  current = match ? new BuildView(decodeURIComponent(match[1])) : new ListView();
}
function navigate(url) {
  history.pushState(null, "", url);
  route();
  const heading = mainEl.querySelector("h1");
  if (heading) heading.focus({preventScroll: true});
}
document.addEventListener("click", (e) => {
  const a = e.target.closest && e.target.closest("a[data-nav]");
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  e.preventDefault();
  navigate(a.getAttribute("href"));
});
window.addEventListener("popstate", route);
setInterval(() => { if (current) current.tick(); }, 1000);
document.addEventListener("visibilitychange", () => { if (!document.hidden && current instanceof ListView) current.refresh(); });

(async () => {
  try {
    const session = await api("/ui/session");
    signOutButton.hidden = !(session.token_required && session.signed_in);
    if (session.token_required && !session.signed_in) { requireSignIn(); return; }
  } catch (e) {
    if (e.status === 401) return;
    if (e.status !== 404) showAlert(e.message, "start");  // 404: an older server without sign-in
  }
  route();
})();

})();
