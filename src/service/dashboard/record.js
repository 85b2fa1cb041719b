// What a build record says, in the dashboard's words: its statuses, what it builds,
// its part of the engine cache, and the badges that the list and the build page share.
import { h } from "./dom.js";
import { fmtAge, fmtTerminalDuration } from "./format.js";

export const FINAL = new Set(["succeeded", "failed", "cancelled", "timed_out", "interrupted"]);
export const STATUSES = ["queued", "running", "cancelling", "succeeded", "failed", "cancelled", "timed_out", "interrupted"];
export const STATUS_TEXT = {queued: "queued", running: "running", cancelling: "cancelling", succeeded: "succeeded",
  failed: "failed", cancelled: "cancelled", timed_out: "timed out", interrupted: "interrupted", forced: "forced stop", cached: "cache hit"};

// The model (file name, full path) or the simulated profile (with its seed and speed).
export function whatOf(build) {
  const r = build.request || {};
  if (r.simulate) return {main: r.simulate, sub: `simulated · seed ${r.seed ?? 0} · speed ${r.speed ?? 1}`};
  const model = r.model || build.model || "";
  return {main: model.split("/").pop() || model, sub: model, title: build.model || model};
}

export function badge(status, extraClass) {
  return h("span.badge" + (extraClass ? "." + extraClass : ""), {dataset: {status}, text: STATUS_TEXT[status] || status});
}

// The worker ignored the cooperative cancel and was killed after the grace period.
export function forcedStop(build) { return Boolean(build.cancel && build.cancel.stop === "forced") || build.exit_signal === 9; }

// The engine cache's answer ({state, key, age_seconds, built_seconds}, or null).
export const cacheHit = (build) => Boolean(build.cache && build.cache.state === "hit");

// The small badge of a hit, its sentence as the tooltip.
export function cacheBadge(build) {
  const b = badge("cached", "cache");
  b.title = reuseText(build.cache);
  return b;
}

// A hit as the terminal says it (src/sinks/format.cc FormatReuse): "reused the engine
// built 3 days ago in 14m02s (engine cache, key 3e78f9d53e9c)".
export function reuseText(cache) {
  let text = "reused the engine built";
  if (typeof cache.age_seconds === "number") text += ` ${fmtAge(cache.age_seconds)} ago`;
  if (typeof cache.built_seconds === "number") text += ` in ${fmtTerminalDuration(cache.built_seconds)}`;
  return `${text} (engine cache, key ${String(cache.key).slice(0, 12)})`;
}

// The engine cache's part in a build, for its page.
export function cacheText(build) {
  const c = build.cache;
  if (!c) {
    if (build.request && build.request.cache === false) return "not used: the request said \"cache\": false";
    if (build.backend === "simulated") return "not used: a simulated build writes no engine";
    return FINAL.has(build.status) ? "not used" : "—";
  }
  if (c.state === "hit") return reuseText(c);
  if (build.status === "succeeded") return "built and stored in the engine cache";
  return FINAL.has(build.status) ? "not in the engine cache; nothing stored (the build did not succeed)"
    : "not in the engine cache: building it";
}
