// The phase-tree contract (tests/contract/phase_tree/README.md) run by the extension's
// BuildView: each stream, parsed and applied as the extension does, must give the
// expected active tree and summary.

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { BuildView, PhaseNode } from '../src/build_view';
import { parseEvent } from '../src/events';

// From out/test/ (where tsc puts this file) up to the repository.
const CONTRACT = path.resolve(__dirname, '..', '..', '..', '..', 'tests', 'contract', 'phase_tree');

interface Row { id: number; name: string; depth: number; total: number; done: number }

function allNodes(level: readonly PhaseNode[]): PhaseNode[] {
  return level.flatMap((node) => [node, ...allNodes(node.children)]);
}

// The active phases depth-first (a phase whose parent is not active is among the roots),
// siblings in start order; none once the build finished.
function activeTree(view: BuildView): Row[] {
  if (view.finished) return [];
  const active = allNodes(view.roots).filter((n) => n.active).sort((a, b) => a.id - b.id);
  const rows: Row[] = [];
  const visit = (n: PhaseNode): void => {
    rows.push({ id: n.id, name: n.name, depth: n.depth, total: n.total, done: n.done });
    for (const child of active) if (child.parent === n) visit(child);
  };
  for (const n of active) if (!n.parent?.active) visit(n);
  return rows;
}

const cases = fs.readdirSync(CONTRACT).filter((f) => f.endsWith('.jsonl')).map((f) => f.slice(0, -6)).sort();

test('the contract has its streams', () => assert.ok(cases.length >= 9, `only ${cases.length} in ${CONTRACT}`));

for (const name of cases) {
  test(`phase-tree contract: ${name}`, () => {
    const view = new BuildView();
    for (const line of fs.readFileSync(path.join(CONTRACT, `${name}.jsonl`), 'utf8').split('\n').filter(Boolean)) {
      const parsed = parseEvent(line);
      assert.ok(parsed.ok, `${name}: ${parsed.ok ? '' : parsed.error}`);
      view.apply(parsed.event);
    }
    const { description, ...expected } = JSON.parse(fs.readFileSync(path.join(CONTRACT, `${name}.json`), 'utf8'));
    const summary = { phases_started: allNodes(view.roots).length, phases_finished: view.phasesFinished,
                      finished: view.finished, status: view.finish?.status ?? null };
    assert.deepEqual({ active: activeTree(view), summary }, expected, description);
  });
}
