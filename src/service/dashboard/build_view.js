// One build's page (/ui/builds/<id>): its record, followed with the build's event
// stream. Events are applied to an in-memory model as they arrive (no DOM work), and
// the model is drawn at most once per animation frame, touching only what changed:
// a long replay costs one pass over the events plus one small DOM update per frame.
import { api, hasTraceEndpoint } from "./api.js";
import { clearAlert, showAlert } from "./alerts.js";
import { confirmCancel, requestCancel } from "./cancel.js";
import { connectionState, setConnection } from "./connection.js";
import { h, mainEl, setAttr, setText } from "./dom.js";
import { EventLog } from "./event_log.js";
import { EventStream } from "./event_stream.js";
import { estimateText, isEstimate, sinceEstimate } from "./estimate.js";
import { fmtBytes, fmtClock, fmtCount, fmtDuration, fmtRelative, parseTime, shortId } from "./format.js";
import { HistoryPanel } from "./history_panel.js";
import { applyPhaseEvent } from "./phase_model.js";
import { PhaseSummary } from "./phase_summary.js";
import { KEEP_FINISHED_DEPTH, PhaseTree } from "./phase_tree.js";
import { FINAL, badge, cacheBadge, cacheHit, cacheText, forcedStop, reuseText, whatOf } from "./record.js";

const SILENT_AFTER = 3;  // seconds without a callback before the page says so

// A cluster job as the record has it: "Slurm job 42 RUNNING on n2, GPU 0" or, while
// queued, "Slurm job 42 PENDING (Resources)"; the local executor's GPU: "GPU-… (PCI
// 0000:5e:00.0) on host1", or "waiting for a free GPU".
function jobText(job) {
  if (!job) return "";
  const gpu = job.gpu && (job.gpu.cuda_visible_devices || job.gpu.slurm_job_gpus);
  if (job.executor === "local") {
    if (job.state === "PENDING") return job.pending_reason || "waiting for a free GPU";
    return [gpu ? `GPU ${gpu}` : "", job.gpu && job.gpu.pci_bus_id ? `(PCI ${job.gpu.pci_bus_id})` : "",
      job.node ? `on ${job.node}` : ""].filter(Boolean).join(" ");
  }
  return [`Slurm job ${job.id || "(submitting)"}`, job.state || "",
    job.pending_reason ? `(${job.pending_reason})` : "", job.node ? `on ${job.node}` : "",
    gpu ? `GPU ${gpu}` : ""].filter(Boolean).join(" ");
}

export class BuildView {
  constructor(id) {
    this.id = id;
    this.record = null;
    this.events = [];           // raw JSON text of every event, for the log view
    this.phases = new Map();    // phase id -> phase (active ones, and the kept finished ones)
    this.dirty = new Set();     // phases whose row needs drawing
    this.start = null;          // build_start
    this.finish = null;         // build_finish
    this.cancelEvent = null;
    this.estimate = null;       // the last `estimate` event
    this.lastActivityT = 0;     // t of the last progress callback seen
    this.lastT = 0;
    this.lastSeq = 0;
    this.anchor = Infinity;     // performance.now() - t*1000, smallest seen: when t was 0 here
    this.frame = 0;
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
    this.etaLine = h("p.eta-line", {hidden: true});
    this.errorBox = h("pre.error-box", {hidden: true});
    this.factsEl = h("dl.facts");
    this.f = {
      what: fact("Model or profile", "what"), backend: fact("Backend", "backend"), elapsed: fact("Elapsed", "elapsed"),
      created: fact("Submitted", "created"), started: fact("Started", "started"), finished: fact("Finished", "finished"),
      cancel: fact("Cancel", "cancel"), latency: fact("Cancel latency", "latency"), engine: fact("Engine", "engine"),
      cache: fact("Engine cache", "cache"), group: fact("Build group", "group"),
      worker: fact("Worker", "worker"), events: fact("Events", "events"),
    };
    this.requestEl = h("pre.log.request");
    this.tree = new PhaseTree(this.phases);
    this.summary = new PhaseSummary();
    this.history = new HistoryPanel(this.id);
    this.log = new EventLog(this.events, this.id);
    this.downloads = h("p");
    mainEl.replaceChildren(
      h("p", {}, h("a", {href: "/", "data-nav": true, text: "← All builds"})),
      h("section.panel", {"aria-labelledby": "build-title"},
        h("div.head", {}, h("h1", {id: "build-title", tabindex: "-1", text: this.id}), this.badges,
          h("span.spacer"), this.cancelButton),
        this.liveLine, this.etaLine, this.errorBox),
      h("section.panel", {"aria-label": "Facts"}, this.factsEl, this.downloads),
      this.tree.element,
      this.summary.element,
      this.history.element,
      h("details.panel", {}, h("summary", {text: "Request and options"}), this.requestEl),
      this.log.element);
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
      case "phase_start":
      case "step":
      case "phase_finish": this.applyPhase(e); break;
      // The worker only knows it got SIGTERM; the record has who cancelled and why.
      case "cancel_requested": this.cancelEvent = e; this.recordStale = true; break;
      case "estimate": if (isEstimate(e)) this.estimate = e; break;
      case "log": if (e.severity === "error" || e.severity === "internal_error") this.lastError = e.message; break;
      case "build_finish":
        this.finish = e;
        this.lastActivityT = e.t;
        break;
      default: break;
    }
  }

  applyPhase(e) {
    this.lastActivityT = e.t;
    const p = applyPhaseEvent(this.phases, e);
    if (!p) return;
    if (p.end === null) {
      this.dirty.add(p);
      return;
    }
    this.summary.add(p);
    if (p.depth > KEEP_FINISHED_DEPTH) {
      this.phases.delete(p.id);
      this.dirty.delete(p);
      this.tree.remove(p);
    } else {
      this.dirty.add(p);
    }
  }

  // ---- model -> DOM, at most once per frame
  schedule() {
    if (!this.frame && !this.destroyed) this.frame = requestAnimationFrame(() => { this.frame = 0; this.draw(); });
  }
  draw() {
    const finished = this.finish !== null;
    this.tree.draw(this.dirty, this.nowT(), finished);
    this.dirty.clear();
    this.drawHeader();
    const now = performance.now();
    this.summary.drawIfDue(now, finished);
    this.log.drawIfDue(now, finished);
    if (this.isFinal() && (this.finish || this.streamEnded) && !this.finalShown) {
      this.finalShown = true;
      performance.mark("trtwatch:final-shown");
      performance.measure("trtwatch:replay", "trtwatch:watch-start", "trtwatch:final-shown");
      mainEl.dataset.final = "true";
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
  // The record's engine-cache answer, else the stream's (build_start and build_finish
  // carry it before the record is read again).
  withCache(r) {
    if (r.cache) return r;
    const e = [this.finish, this.start].find((x) => x && (x.cache === "hit" || x.cache === "miss"));
    return e ? {...r, cache: {state: e.cache, key: e.key, age_seconds: e.cache_age_seconds, built_seconds: e.cache_built_seconds}} : r;
  }
  drawHeader() {
    const r = this.record && this.withCache(this.record);
    if (!r) return;
    const status = this.status();
    this.drawStatus(r, status);
    this.drawFacts(r, status);
    this.drawCancelFacts(r);
    const error = r.error || (this.finish && this.finish.error) || (FINAL.has(status) ? null : this.lastError);
    this.errorBox.hidden = !error;
    if (error) setText(this.errorBox, error);
    this.drawLiveLine(status, r);
    this.drawEta(status, r);
    this.history.update(r.history_key || (this.start && this.start.key), FINAL.has(r.status));
    if (FINAL.has(status) && !this.downloadsDrawn) this.drawDownloads();
  }
  drawStatus(r, status) {
    const key = status + (forcedStop(r) ? "+forced" : "") + (cacheHit(r) ? "+cached" : "");
    if (this.badgeKey !== key) {
      this.badgeKey = key;
      this.badges.replaceChildren(badge(status), forcedStop(r) ? badge("forced") : "", cacheHit(r) ? cacheBadge(r) : "");
    }
    mainEl.dataset.status = status;
    this.cancelButton.hidden = !(status === "queued" || status === "running");
  }
  drawFacts(r, status) {
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
    this.drawEngine(r, status);
    this.drawGroup(r);
    setText(this.f.cache, cacheText({...r, status}));
    mainEl.dataset.cache = r.cache ? r.cache.state : "";
    const exit = r.exit_signal ? `killed by signal ${r.exit_signal}` : r.exit_code !== null && r.exit_code !== undefined ? `exit code ${r.exit_code}` : "";
    setText(this.f.worker, [r.worker_pid ? `pid ${r.worker_pid}` : "", jobText(r.job), exit, r.reason || ""]
      .filter(Boolean).join(", ") || "—");
    setText(this.f.events, fmtCount(this.events.length) +
      (this.lastSeq > this.events.length ? ` received (up to #${this.lastSeq}; steps are coalesced)` : ""));
    mainEl.dataset.lastSeq = String(this.lastSeq || 0);
    mainEl.dataset.events = String(this.events.length);
    this.requestText = this.requestText || JSON.stringify(r.request || {}, null, 2);
    setText(this.requestEl, this.requestText);
  }
  // The engine (the timing cache the build wrote, the fleet's cache it was given) as
  // download links with their sizes, once stored; records from before downloads name
  // only a path.
  drawEngine(r, status) {
    const fleet = r.fleet_timing_cache && r.fleet_timing_cache.name;
    const files = [["engine", "Download engine", `${this.id}.engine`],
      ["timing_cache", "timing cache", `${this.id}.timing-cache`],
      ["fleet_timing_cache", `the fleet timing cache it was given, ${fleet}`, fleet]]
      .filter(([key]) => r[key] && typeof r[key] === "object" && r[key].url);
    const key = files.map(([k]) => r[k].url).join(" ");
    if (!files.length) {
      this.engineKey = "";
      const path = typeof r.engine === "string" ? r.engine : "";
      setText(this.f.engine, path || (FINAL.has(status) ? "none" : "not yet"));
      return;
    }
    if (this.engineKey === key) return;
    this.engineKey = key;
    const links = files.map(([k, label, name]) => {
      const size = fmtBytes(r[k].size);
      return h(`a.download.${k.replaceAll("_", "-")}`, {href: r[k].url, download: name,
        text: `${label}${size ? ` (${size})` : ""}`, title: r[k].sha256 ? `SHA-256 ${r[k].sha256}` : ""});
    });
    this.f.engine.replaceChildren(...links.flatMap((a, i) => (i ? [" · ", a] : [a])));
  }
  // A group member names its group and target, and links the group's manifest (docs/api.md).
  drawGroup(r) {
    const g = r.group && typeof r.group === "object" ? r.group : null;
    this.f.group.parentElement.hidden = !g;
    if (!g || this.groupShown === g.id) return;
    this.groupShown = g.id;
    this.f.group.replaceChildren(`${g.id}, target ${g.target} · `,
      h("a", {href: `/groups/${encodeURIComponent(g.id)}/manifest`, text: "the group's Triton manifest"}));
  }
  // Who cancelled and why (the record's word, else the stream's), and how long the stop took.
  drawCancelFacts(r) {
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
  }
  deepestActive() {
    let deepest = null;
    for (const p of this.phases.values()) if (p.end === null && (!deepest || p.depth >= deepest.depth)) deepest = p;
    return deepest;
  }
  drawLiveLine(status, r) {
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
      if (this.start && silent >= SILENT_AFTER && connectionState() === "live") {
        kind = "silent";
        text = `Last activity ${Math.floor(silent)} s ago — TensorRT is inside one step${where ? " of " + where : ""}.`;
      } else if (connectionState() !== "live") {
        kind = "silent";
        text = "Connection lost — the state below is the last one received; reconnecting…";
      } else {
        text = where ? `Running: ${where}` : "Starting…";
      }
    } else if (FINAL.has(status)) {
      const took = fmtDuration(this.nowT());
      const cancel = (this.record && this.record.cancel) || this.cancelEvent;
      text = {
        succeeded: cacheHit(r) ? `Succeeded in ${took}: ${reuseText(r.cache)}.` : `Succeeded in ${took}.`,
        failed: `Failed after ${took}.`,
        cancelled: `Cancelled after ${took}` + (cancel ? ` — reason: ${cancel.reason}${cancel.message ? " (" + cancel.message + ")" : ""}.` : "."),
        timed_out: `Timed out after ${took}.`,
        interrupted: "Interrupted: the service stopped while this build ran.",
      }[status];
    }
    setText(this.liveLine, text);
    setAttr(this.liveLine, "data-kind", kind);
  }
  // The remaining time while the build runs, counted down between estimates: the
  // newest of the stream's last `estimate` event and the record's.
  drawEta(status, r) {
    let estimate = this.estimate;
    if (isEstimate(r.estimate) && (!estimate || (r.estimate.t || 0) > (estimate.t || 0))) estimate = r.estimate;
    const shown = Boolean(estimate) && status === "running";
    this.etaLine.hidden = !shown;
    if (!shown) return;
    setText(this.etaLine, estimateText(estimate, sinceEstimate(estimate, this.nowT())));
    setAttr(this.etaLine, "data-kind", !estimate.remaining ? "none" : estimate.longer_than_history ? "longer" : "range");
  }
  async drawDownloads() {
    this.downloadsDrawn = true;
    if (!(await hasTraceEndpoint()) || this.destroyed) return;
    this.downloads.replaceChildren(h("a", {href: `/builds/${encodeURIComponent(this.id)}/trace`, download: `${this.id}.trace.json`,
      text: "Download the Chrome trace"}), " — open it in Perfetto (ui.perfetto.dev) or chrome://tracing.");
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
    this.tree.tick(this.nowT());
    this.drawHeader();
  }
}
