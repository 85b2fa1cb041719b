// The phase-tree contract (tests/contract/phase_tree/README.md) run by the dashboard's
// phase model, the module the build page folds its events with.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { applyPhaseEvent } from "../../src/service/dashboard/phase_model.js";

const CONTRACT = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "contract", "phase_tree");

// The page's phases as the contract writes them: active ones depth-first (a phase whose
// parent is not active is among the roots), siblings in start order; none once finished.
function activeTree(phases, finished) {
  if (finished) return [];
  const active = [...phases.values()].filter((p) => p.end === null).sort((a, b) => a.id - b.id);
  const isRoot = (p) => !p.parent || p.parent.end !== null;
  const out = [];
  const visit = (p) => {
    out.push({id: p.id, name: p.name, depth: p.depth, total: p.total, done: p.done});
    for (const child of active) if (child.parent === p) visit(child);
  };
  for (const p of active) if (isRoot(p)) visit(p);
  return out;
}

function fold(lines) {
  const phases = new Map();
  const summary = {phases_started: 0, phases_finished: 0, finished: false, status: null};
  for (const e of lines) {
    if (e.type === "build_finish") Object.assign(summary, {finished: true, status: e.status});
    const p = applyPhaseEvent(phases, e);
    if (p && e.type === "phase_start") summary.phases_started++;
    if (p && e.type === "phase_finish") summary.phases_finished++;
  }
  return {active: activeTree(phases, summary.finished), summary};
}

const cases = fs.readdirSync(CONTRACT).filter((f) => f.endsWith(".jsonl")).map((f) => f.slice(0, -6)).sort();

test("the contract has its streams", () => assert.ok(cases.length >= 9, `only ${cases.length} in ${CONTRACT}`));

for (const name of cases) {
  test(`phase-tree contract: ${name}`, () => {
    const events = fs.readFileSync(path.join(CONTRACT, `${name}.jsonl`), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    const {description, ...expected} = JSON.parse(fs.readFileSync(path.join(CONTRACT, `${name}.json`), "utf8"));
    assert.deepEqual(fold(events), expected, description);
  });
}
