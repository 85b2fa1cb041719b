// The dashboard's pure modules without a browser: the ETA's words (the terminal's, as
// tests/unit's FormatTest pins them), its countdown, the history chart's scaling and the
// comparison's change column. The modules are the files the service embeds.
import { test } from "node:test";
import assert from "node:assert/strict";
import { compactEstimateText, estimateText, isEstimate, rangeText, sinceEstimate } from "../../src/service/dashboard/estimate.js";
import { CHART, chartLayout, niceCeiling } from "../../src/service/dashboard/history_chart.js";
import { fmtChange, fmtClock } from "../../src/service/dashboard/format.js";

const seven = (extra = {}) => ({remaining: {p10: 250, p50: 300, p90: 340}, based_on: {builds: 7, match: "exact"},
  longer_than_history: false, t: 60, ...extra});

test("an estimate reads as the terminal says it", () => {
  assert.equal(estimateText(seven(), 0), "about 4–6 min left, from 7 earlier builds");
  assert.equal(estimateText(seven({based_on: {builds: 7, match: "similar"}, longer_than_history: true}), 0),
    "about 4–6 min left, longer than any of the 7 earlier builds on similar GPUs");
  assert.equal(estimateText({remaining: null, based_on: {builds: 2, match: "exact"}, longer_than_history: false, t: 0}, 0),
    "no ETA: 2 earlier builds of this model and GPU (3 needed)");
  assert.equal(estimateText({remaining: null, based_on: {builds: 1, match: "exact"}, t: 0}, 0),
    "no ETA: 1 earlier build of this model and GPU (3 needed)");
});

test("the range rounds outwards in seconds, minutes or hours and never collapses", () => {
  assert.equal(rangeText(21, 34), "20–35 s");
  assert.equal(rangeText(250, 340), "4–6 min");
  assert.equal(rangeText(7200, 9000), "2–3 h");
  assert.equal(rangeText(0, 0), "0–5 s");
  assert.equal(rangeText(120, 120), "2–3 min");
});

test("the range counts down by the build's time since the estimate, down to zero", () => {
  const e = seven();  // given at t = 60 s
  assert.equal(sinceEstimate(e, 60), 0);
  assert.equal(sinceEstimate(e, 340), 280);
  assert.equal(sinceEstimate(e, 10), 0, "a clock behind the estimate does not count up");
  assert.equal(estimateText(e, sinceEstimate(e, 340)), "about 0–60 s left, from 7 earlier builds");
  assert.equal(estimateText(e, 10000), "about 0–5 s left, from 7 earlier builds");
});

test("the list row's short form, and nothing without an ETA", () => {
  assert.equal(compactEstimateText(seven(), 0), "about 4–6 min left");
  assert.equal(compactEstimateText(seven({longer_than_history: true}), 0), "about 4–6 min left (longer than any earlier build)");
  assert.equal(compactEstimateText({remaining: null, based_on: {builds: 2}}, 0), "");
  assert.equal(compactEstimateText(null, 0), "");
});

test("only well-formed estimates are shown", () => {
  assert.ok(isEstimate(seven()));
  assert.ok(isEstimate({remaining: null, based_on: {builds: 0}}));
  for (const bad of [null, undefined, "x", {}, {remaining: {p10: 1, p50: "2", p90: 3}}, {remaining: {p10: 1, p50: 2, p90: Infinity}}]) {
    assert.equal(isEstimate(bad), false, JSON.stringify(bad));
  }
});

test("the chart's duration axis ends at a round number at or above the longest build", () => {
  assert.equal(niceCeiling(0), 1);
  assert.equal(niceCeiling(3.2), 5);
  assert.equal(niceCeiling(10), 10);
  assert.equal(niceCeiling(11), 20);
  assert.equal(niceCeiling(430), 500);
});

test("the chart puts builds left to right by when they finished, heights by their duration", () => {
  // GET /history answers newest first.
  const entries = [
    {build: "b_c", finished_at: 3000, elapsed: 50, status: "failed"},
    {build: "b_b", finished_at: 2000, elapsed: 100, status: "succeeded"},
    {build: "b_a", finished_at: 1000, elapsed: 25, status: "succeeded"},
  ];
  const {points, yMax, x0, x1, y0, y1} = chartLayout(entries, "b_b");
  assert.equal(yMax, 100);
  assert.deepEqual(points.map((p) => p.entry.build), ["b_a", "b_b", "b_c"]);
  assert.deepEqual(points.map((p) => p.x), [x0, (x0 + x1) / 2, x1]);
  assert.equal(points[1].y, y1, "the longest build at the top");
  assert.equal(points[0].y, y0 - (y0 - y1) / 4);
  assert.deepEqual(points.map((p) => p.failed), [false, false, true]);
  assert.deepEqual(points.map((p) => p.marked), [false, true, false]);
  assert.equal(x0, CHART.left);
});

test("one build sits in the middle; builds without a time are left out", () => {
  const {points, x0, x1} = chartLayout([{build: "b", finished_at: 5, elapsed: 7, status: "succeeded"},
    {build: "x", finished_at: null, elapsed: 3, status: "succeeded"}], "none");
  assert.equal(points.length, 1);
  assert.equal(points[0].x, (x0 + x1) / 2);
});

test("the comparison's change column", () => {
  assert.equal(fmtChange(100, 112), "+12 s (+12 %)");
  assert.equal(fmtChange(100, 97), "-3.0 s (-3 %)");
  assert.equal(fmtChange(0, 5), "+5.0 s");
});

test("an audit entry reads as its row: local time, user, action, target and detail", async () => {
  const { auditErrorText, auditRow, detailText } = await import("../../src/service/dashboard/audit_rows.js");
  const at = "2026-12-06T10:20:30.000Z";
  const row = auditRow({seq: 3, at, user: "ana", action: "build.cancel", target: "b_0123",
    detail: {reason: "api", message: "cancelled by POST /builds/b_0123/cancel"}});
  assert.equal(row.time, fmtClock(Date.parse(at)));
  assert.equal(row.user, "ana");
  assert.equal(row.action, "build.cancel");
  assert.equal(row.link, "/ui/builds/b_0123");
  assert.equal(row.detail, "reason: api, message: cancelled by POST /builds/b_0123/cancel");
  const upload = auditRow({at, user: "anonymous", action: "model.upload", target: "resnet", detail: {size: 3, sha256: null}});
  assert.equal(upload.link, null, "a model has no dashboard page");
  assert.equal(upload.detail, "size: 3");
  assert.equal(auditRow({at, user: "bo", action: "ui.sign_in", target: "", detail: {}}).target, "—");
  assert.equal(detailText(null), "");
  assert.equal(auditErrorText(403, "forbidden"), "The audit trail is for admins.");
  assert.equal(auditErrorText(503, "the store is down"), "Could not read the audit trail: the store is down.");
});
