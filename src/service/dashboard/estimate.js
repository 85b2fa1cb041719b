// The ETA from the build history, in the terminal's words (src/sinks/format.cc
// EstimateText): "about 4–6 min left, from 7 earlier builds". An estimate comes with the
// build's event clock `t`; between estimates the range counts down by the time since.
// Pure functions: no DOM (tests/node runs them without a browser).

export const ETA_NEEDS = 3;  // earlier successful builds of the key before there is an ETA

// "20–35 s", "4–6 min", "2–3 h": the low end rounded down, the high end up, never equal.
export function rangeText(low, high) {
  let unit = 1, step = 5, name = " s";
  if (high >= 7200) { unit = 3600; step = 1; name = " h"; }
  else if (high >= 90) { unit = 60; step = 1; name = " min"; }
  const lo = Math.floor(low / unit / step) * step;
  let hi = Math.ceil(high / unit / step) * step;
  if (hi <= lo) hi = lo + step;
  return `${lo}–${hi}${name}`;
}

// Seconds to subtract from the estimate's range: the build's time since the estimate.
export function sinceEstimate(estimate, nowT) {
  return typeof estimate.t === "number" ? Math.max(0, nowT - estimate.t) : 0;
}

function buildsText(estimate) {
  const n = (estimate.based_on && estimate.based_on.builds) || 0;
  const similar = estimate.based_on && estimate.based_on.match === "similar" ? " on similar GPUs" : "";
  return {builds: `${n} earlier build${n === 1 ? "" : "s"}`, similar};
}

// The full sentence for the build page; `since` as sinceEstimate() gives it.
export function estimateText(estimate, since) {
  const {builds, similar} = buildsText(estimate);
  const r = estimate.remaining;
  if (!r) return `no ETA: ${builds} of this model and GPU${similar} (${ETA_NEEDS} needed)`;
  const text = `about ${remainingRange(r, since)} left, `;
  if (estimate.longer_than_history) return `${text}longer than any of the ${builds}${similar}`;
  return `${text}from ${builds}${similar}`;
}

// The list row's short form: "about 4–6 min left"; "" without an ETA.
export function compactEstimateText(estimate, since) {
  if (!estimate || !estimate.remaining) return "";
  return `about ${remainingRange(estimate.remaining, since)} left` + (estimate.longer_than_history ? " (longer than any earlier build)" : "");
}

function remainingRange(r, since) {
  return rangeText(Math.max(0, r.p10 - since), Math.max(0, r.p90 - since));
}

// An estimate as the record or an event has it: remaining null or three numbers.
export function isEstimate(e) {
  if (!e || typeof e !== "object") return false;
  const r = e.remaining;
  return r === null || Boolean(r && typeof r === "object" && ["p10", "p50", "p90"].every((k) => typeof r[k] === "number" && isFinite(r[k])));
}
