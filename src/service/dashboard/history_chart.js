// The durations of a key's earlier builds over time, as a small inline SVG (no chart
// library): one point per build, oldest left, failed builds as crosses, the build on
// the page ringed. chartLayout() is pure (tests/node checks its scaling); drawing needs
// the DOM only when called.
import { fmtClock, fmtDuration } from "./format.js";

export const CHART = {width: 560, height: 160, left: 48, right: 12, top: 10, bottom: 22};

// A round upper end for the duration axis: 1, 2 or 5 times a power of ten, >= max.
export function niceCeiling(max) {
  if (!(max > 0)) return 1;
  const power = Math.pow(10, Math.floor(Math.log10(max)));
  for (const m of [1, 2, 5, 10]) if (m * power >= max) return m * power;
  return 10 * power;
}

// Entries (GET /history: newest first, finished_at in Unix seconds, elapsed in seconds)
// -> points in the SVG's coordinates, oldest first. One build alone sits in the middle.
export function chartLayout(entries, markedBuild, size = CHART) {
  const usable = entries.filter((e) => typeof e.finished_at === "number" && typeof e.elapsed === "number" && isFinite(e.elapsed))
    .sort((a, b) => a.finished_at - b.finished_at);
  const yMax = niceCeiling(Math.max(0, ...usable.map((e) => e.elapsed)));
  const x0 = size.left, x1 = size.width - size.right, y0 = size.height - size.bottom, y1 = size.top;
  const first = usable.length ? usable[0].finished_at : 0;
  const span = usable.length ? usable[usable.length - 1].finished_at - first : 0;
  const points = usable.map((e, i) => ({
    x: span > 0 ? x0 + ((e.finished_at - first) / span) * (x1 - x0) : usable.length > 1 ? x0 + (i / (usable.length - 1)) * (x1 - x0) : (x0 + x1) / 2,
    y: y0 - (Math.max(0, e.elapsed) / yMax) * (y0 - y1),
    failed: e.status !== "succeeded",
    marked: e.build === markedBuild,
    entry: e,
  }));
  return {points, yMax, x0, x1, y0, y1};
}

const SVG = "http://www.w3.org/2000/svg";
function svg(tag, attrs, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
  for (const c of children) if (c !== "" && c !== null && c !== undefined) el.append(c);
  return el;
}

function pointTitle(e) {
  return `${e.build}: ${e.status}, ${fmtDuration(e.elapsed)}, finished ${fmtClock(e.finished_at * 1000)}`;
}

function pointMark(p) {
  const title = svg("title", {}, pointTitle(p.entry));
  const cls = "pt" + (p.failed ? " failed" : "") + (p.marked ? " this" : "");
  if (p.failed) {
    const d = `M${p.x - 4} ${p.y - 4}L${p.x + 4} ${p.y + 4}M${p.x - 4} ${p.y + 4}L${p.x + 4} ${p.y - 4}`;
    return svg("g", {class: cls, "data-build": p.entry.build}, svg("path", {d}), p.marked ? svg("circle", {class: "ring", cx: p.x, cy: p.y, r: 8}) : "", title);
  }
  return svg("g", {class: cls, "data-build": p.entry.build}, svg("circle", {cx: p.x, cy: p.y, r: 3.5}),
    p.marked ? svg("circle", {class: "ring", cx: p.x, cy: p.y, r: 8}) : "", title);
}

// The chart as an <svg>, its description for screen readers in aria-label.
export function historyChart(entries, markedBuild) {
  const layout = chartLayout(entries, markedBuild);
  const {points, yMax, x0, x1, y0, y1} = layout;
  const failed = points.filter((p) => p.failed).length;
  const label = `Durations of ${points.length} builds of this key over time, from ${fmtDuration(Math.min(...points.map((p) => p.entry.elapsed)))} ` +
    `to ${fmtDuration(Math.max(...points.map((p) => p.entry.elapsed)))}` + (failed ? `; ${failed} did not succeed (crosses)` : "") +
    (points.some((p) => p.marked) ? "; this build is ringed" : "");
  const line = points.filter((p) => !p.failed).map((p, i) => `${i ? "L" : "M"}${p.x.toFixed(1)} ${p.y.toFixed(1)}`).join("");
  return svg("svg", {class: "history-chart", viewBox: `0 0 ${CHART.width} ${CHART.height}`, role: "img", "aria-label": label,
    "data-points": points.length},
  svg("line", {class: "axis", x1: x0, y1: y0, x2: x1, y2: y0}),
  svg("line", {class: "axis", x1: x0, y1: y0, x2: x0, y2: y1}),
  svg("line", {class: "grid", x1: x0, y1: y1, x2: x1, y2: y1}),
  svg("text", {class: "tick", x: x0 - 4, y: y1 + 4, "text-anchor": "end"}, fmtDuration(yMax)),
  svg("text", {class: "tick", x: x0 - 4, y: y0, "text-anchor": "end"}, "0"),
  points.length ? svg("text", {class: "tick", x: x0, y: CHART.height - 6}, fmtClock(points[0].entry.finished_at * 1000).slice(0, 16)) : "",
  points.length > 1 ? svg("text", {class: "tick", x: x1, y: CHART.height - 6, "text-anchor": "end"},
    fmtClock(points[points.length - 1].entry.finished_at * 1000).slice(0, 16)) : "",
  line ? svg("path", {class: "trend", d: line}) : "",
  ...points.map(pointMark));
}
