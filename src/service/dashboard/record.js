// What a build record says, in the dashboard's words: its statuses, what it builds,
// and the status badge that the list and the build page share.
import { h } from "./dom.js";

export const FINAL = new Set(["succeeded", "failed", "cancelled", "timed_out", "interrupted"]);
export const STATUSES = ["queued", "running", "cancelling", "succeeded", "failed", "cancelled", "timed_out", "interrupted"];
export const STATUS_TEXT = {queued: "queued", running: "running", cancelling: "cancelling", succeeded: "succeeded",
  failed: "failed", cancelled: "cancelled", timed_out: "timed out", interrupted: "interrupted", forced: "forced stop"};

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
