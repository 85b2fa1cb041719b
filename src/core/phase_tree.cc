#include "core/phase_tree.h"

#include <algorithm>
#include <functional>

namespace trtwatch {

namespace {
constexpr size_t kErrorsKept = 5;

using ActiveIndex = std::map<int64_t, size_t>;  // active id -> position in TreeSnapshot::active

// A phase or step event: the build is not stalled any more.
void Progressed(TreeSnapshot& state, double t) {
  state.last_progress_t = t;
  state.stalled_for.reset();
}

void StartPhase(TreeSnapshot& state, ActiveIndex& index, const Event& event) {
  Progressed(state, event.t);
  if (index.count(event.id) != 0) return;  // an id already active: the first phase keeps it
  PhaseNode node;
  node.id = event.id;
  node.parent = event.parent;
  node.name = event.phase;
  node.total = event.total;
  node.started_at = event.t;
  auto parent = index.find(event.parent);
  node.depth = parent == index.end() ? 0 : state.active[parent->second].depth + 1;
  index[node.id] = state.active.size();
  state.active.push_back(std::move(node));
  ++state.phases_started;
}

void StepPhase(TreeSnapshot& state, const ActiveIndex& index, const Event& event) {
  Progressed(state, event.t);
  auto it = index.find(event.id);
  if (it == index.end()) return;  // a step for an id that is not active
  PhaseNode& node = state.active[it->second];
  node.done = std::max(node.done, event.step + 1);  // a late, lower step never lowers it
}

}  // namespace

const PhaseNode* PhaseTree::Find(int64_t id) const {
  auto it = index_.find(id);
  return it == index_.end() ? nullptr : &state_.active[it->second];
}

void PhaseTree::Remove(int64_t id) {
  auto it = index_.find(id);
  if (it == index_.end()) return;
  const size_t pos = it->second;
  index_.erase(it);
  if (pos + 1 != state_.active.size()) {  // swap-remove keeps the removal O(log n)
    state_.active[pos] = std::move(state_.active.back());
    index_[state_.active[pos].id] = pos;
  }
  state_.active.pop_back();
}

void PhaseTree::Apply(const Event& event) {
  state_.last_event_t = event.t;
  switch (event.type) {
    case EventType::kBuildStart:
      state_.build = event.build;
      state_.backend = event.backend;
      state_.model = event.model;
      state_.facts = event.facts;
      break;
    case EventType::kPhaseStart:
      StartPhase(state_, index_, event);
      break;
    case EventType::kStep:
      StepPhase(state_, index_, event);
      break;
    case EventType::kPhaseFinish:
      Progressed(state_, event.t);
      // A finish for an id that is not active (never started, or finished already)
      // counts nothing: phases_finished never exceeds phases_started.
      if (index_.count(event.id) == 0) break;
      Remove(event.id);
      ++state_.phases_finished;
      break;
    case EventType::kCancelRequested:
      state_.cancel_reason = event.reason;
      state_.cancel_message = event.message;
      state_.cancel_requested_at = event.t;
      break;
    case EventType::kStall:
      state_.stalled_for = event.silent_for;
      break;
    case EventType::kEstimate:
      state_.estimate = event.estimate;
      state_.estimate_t = event.t;
      break;
    case EventType::kLog:
      if (event.severity <= Severity::kError) {
        state_.last_errors.push_back(event.message);
        if (state_.last_errors.size() > kErrorsKept) state_.last_errors.erase(state_.last_errors.begin());
      }
      break;
    case EventType::kBuildFinish:
      state_.finished = true;
      state_.status = event.status;
      state_.error = event.error;
      state_.active.clear();
      index_.clear();
      break;
  }
}

std::shared_ptr<const TreeSnapshot> PhaseTree::Snapshot() const {
  auto snapshot = std::make_shared<TreeSnapshot>(state_);
  // Depth-first order: children after their parent, siblings in start order.
  std::vector<PhaseNode>& nodes = snapshot->active;
  std::sort(nodes.begin(), nodes.end(),
            [](const PhaseNode& a, const PhaseNode& b) { return a.id < b.id; });
  std::multimap<int64_t, const PhaseNode*> children;
  for (const PhaseNode& n : nodes) {
    const bool has_parent = index_.count(n.parent) != 0;
    children.emplace(has_parent ? n.parent : kNoPhase, &n);
  }
  std::vector<PhaseNode> ordered;
  ordered.reserve(nodes.size());
  std::function<void(int64_t)> visit = [&](int64_t parent) {
    auto [begin, end] = children.equal_range(parent);
    for (auto it = begin; it != end; ++it) {
      ordered.push_back(*it->second);
      visit(it->second->id);
    }
  };
  visit(kNoPhase);
  snapshot->active = std::move(ordered);
  return snapshot;
}

}  // namespace trtwatch
