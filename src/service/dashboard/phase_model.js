// The build page's phases folded from the event stream, without the DOM: the same
// answers as the core's PhaseTree on the phase-tree contract (tests/contract/phase_tree,
// run by tests/node). A phase is {id, name, total, done, start, end, early, parent,
// depth, ...}; the page adds its rows to it when it draws.

function newPhase(e, parent) {
  return {id: e.id, name: e.phase, total: e.total, done: 0, start: e.t, end: null, early: false,
    parent, depth: parent ? parent.depth + 1 : 0, li: null, row: null, kids: null, spans: []};
}

// Applies a phase_start, step or phase_finish to `phases` (id -> phase). Returns the
// phase it changed, or null when the event changes nothing: a start for an id already
// known, a step or finish for an id that is unknown or finished.
export function applyPhaseEvent(phases, e) {
  if (e.type === "phase_start") {
    if (phases.has(e.id)) return null;
    const parent = phases.get(e.parent);
    const p = newPhase(e, parent && parent.end === null ? parent : null);
    phases.set(e.id, p);
    return p;
  }
  const p = phases.get(e.id);
  if (!p || p.end !== null) return null;
  if (e.type === "step") {
    p.done = Math.max(p.done, e.step + 1);  // a late, lower step never lowers it
  } else if (e.type === "phase_finish") {
    p.end = e.t;
    p.done = e.completed;
    p.early = Boolean(e.early);
    p.elapsed = typeof e.elapsed === "number" ? e.elapsed : e.t - p.start;
  }
  return p;
}
