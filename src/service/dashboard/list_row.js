// One row of the build list: built once, then updated in place from each new record
// and ticked every second for its relative start time and running duration.
import { confirmCancel, requestCancel } from "./cancel.js";
import { showAlert } from "./alerts.js";
import { h, setAttr, setText } from "./dom.js";
import { compactEstimateText, isEstimate, sinceEstimate } from "./estimate.js";
import { fmtClock, fmtDuration, fmtRelative, parseTime, shortId } from "./format.js";
import { FINAL, badge, cacheBadge, cacheHit, forcedStop, whatOf } from "./record.js";

export class ListRow {
  constructor(build, changed) {
    this.changed = changed;
    this.badges = h("td", {"data-label": "Status"});
    this.link = h("a.build-link", {"data-nav": true});
    this.whatMain = h("span");
    this.whatSub = h("div.activity");
    this.started = h("time");
    this.duration = h("span");
    this.eta = h("div.eta");
    this.activity = h("td.activity", {"data-label": "Activity"});
    this.cancel = h("button.danger", {type: "button", text: "Cancel", on: {click: () => this.onCancel()}});
    this.tr = h("tr", {},
      this.badges,
      h("td", {"data-label": "Build"}, this.link),
      h("td.what", {"data-label": "Model"}, this.whatMain, this.whatSub),
      h("td.num", {"data-label": "Started"}, this.started),
      h("td.num", {"data-label": "Duration"}, this.duration, this.eta), this.activity,
      h("td", {}, this.cancel));
    this.update(build);
  }
  update(build) {
    this.build = build;
    const status = build.status;
    const key = status + (forcedStop(build) ? "+forced" : "") + (cacheHit(build) ? "+cached" : "");
    if (this.badgeKey !== key) {
      this.badgeKey = key;
      this.badges.replaceChildren(badge(status), forcedStop(build) ? badge("forced") : "",
        cacheHit(build) ? cacheBadge(build) : "");
    }
    this.tr.dataset.status = status;
    this.tr.dataset.id = build.id;
    setAttr(this.link, "href", `/ui/builds/${build.id}`);
    setText(this.link, shortId(build.id));
    setAttr(this.link, "title", build.id);
    setAttr(this.link, "aria-label", `Build ${build.id}`);
    const what = whatOf(build);
    setText(this.whatMain, what.main);
    const sub = what.sub === what.main ? "" : what.sub;
    setText(this.whatSub, build.group ? `target ${build.group.target}` + (sub ? ` · ${sub}` : "") : sub);
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
    // The ETA counts down from the record's estimate, given `t` seconds after the start.
    const estimate = b.status === "running" && started && isEstimate(b.estimate) ? b.estimate : null;
    setText(this.eta, estimate ? compactEstimateText(estimate, sinceEstimate(estimate, (now - started) / 1000)) : "");
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
