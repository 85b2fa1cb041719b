#include "sinks/trace_sink.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "platform/atomic_file.h"
#include "sinks/tty_frame.h"

namespace trtwatch {

size_t TraceLanes::Start(int64_t id, int64_t parent) {
  size_t lane = lanes_.size();
  auto parent_lane = lane_of_.find(parent);
  if (parent_lane != lane_of_.end() && lanes_[parent_lane->second].back() == parent) {
    lane = parent_lane->second;  // the parent's lane is free above the parent
  } else {
    for (size_t i = 0; i < lanes_.size(); ++i) {
      if (lanes_[i].empty()) {
        lane = i;
        break;
      }
    }
  }
  if (lane == lanes_.size()) lanes_.emplace_back();
  lanes_[lane].push_back(id);
  lane_of_[id] = lane;
  return lane;
}

std::vector<int64_t> TraceLanes::Finish(int64_t id) {
  std::vector<int64_t> cut;
  auto it = lane_of_.find(id);
  if (it == lane_of_.end()) return cut;
  std::vector<int64_t>& stack = lanes_[it->second];
  lane_of_.erase(it);
  while (!stack.empty() && stack.back() != id) {
    cut.push_back(stack.back());
    lane_of_.erase(stack.back());
    stack.pop_back();
  }
  if (!stack.empty()) stack.pop_back();
  return cut;
}

void TraceBuilder::End(int64_t id, double t, bool early, bool cut) {
  auto it = open_.find(id);
  if (it == open_.end()) return;
  const Open& o = it->second;
  spans_.push_back(Span{o.name, o.start, std::max(t, o.start), o.lane, o.done, o.total, early, cut});
  open_.erase(it);
}

void TraceBuilder::Apply(const Event& e) {
  last_t_ = std::max(last_t_, e.t);
  switch (e.type) {
    case EventType::kBuildStart: {
      TreeSnapshot described;
      described.backend = e.backend;
      described.model = e.model;
      described.facts = e.facts;
      title_ = "trtwatch: " + DescribeBuild(described) + " [" + e.build + "]";
      break;
    }
    case EventType::kPhaseStart: {
      const size_t lane = lanes_.Start(e.id, e.parent);
      open_[e.id] = Open{e.phase, e.t, lane, e.total, 0};
      break;
    }
    case EventType::kStep: {
      auto it = open_.find(e.id);
      if (it != open_.end()) it->second.done = std::max(it->second.done, e.step + 1);
      break;
    }
    case EventType::kPhaseFinish: {
      for (int64_t inner : lanes_.Finish(e.id)) End(inner, e.t, true, true);
      auto it = open_.find(e.id);
      if (it != open_.end()) it->second.done = std::max(it->second.done, e.completed);
      End(e.id, e.t, e.early, false);
      break;
    }
    case EventType::kCancelRequested:
      instants_.push_back(Instant{"cancel requested", e.t,
                                  std::string(CancelReasonName(e.reason)) + ": " + e.message});
      break;
    case EventType::kStall:
      instants_.push_back(Instant{"stall", e.t, "no progress callback for " + std::to_string(e.silent_for) + " s"});
      break;
    case EventType::kLog:
    case EventType::kEstimate:
      break;
    case EventType::kBuildFinish:
      finished_ = true;
      status_ = std::string(BuildStatusName(e.status));
      elapsed_ = e.elapsed;
      break;
  }
}

std::string TraceBuilder::Json() const {
  using nlohmann::json;
  // Microseconds, rounded: rounding is monotonic, so nesting survives it.
  const auto us = [](double seconds) { return static_cast<int64_t>(std::llround(seconds * 1e6)); };
  json events = json::array();
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 0}, {"args", {{"name", title_}}}});

  std::vector<Span> spans = spans_;
  for (const auto& [id, o] : open_) spans.push_back(Span{o.name, o.start, last_t_, o.lane, o.done, o.total, true, true});
  size_t lanes = lanes_.lane_count();
  if (finished_ || !spans.empty()) {
    // The whole build on the first lane: every phase there nests inside it.
    const double end = finished_ ? std::max(elapsed_, last_t_) : last_t_;
    events.push_back({{"name", finished_ ? "build (" + status_ + ")" : "build"},
                      {"cat", "build"},
                      {"ph", "X"},
                      {"ts", 0},
                      {"dur", us(end)},
                      {"pid", 1},
                      {"tid", 1}});
    lanes = std::max<size_t>(lanes, 1);
  }
  for (size_t lane = 0; lane < lanes; ++lane) {
    const std::string name = lane == 0 ? "phases" : "phases (concurrent " + std::to_string(lane) + ")";
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", lane + 1}, {"args", {{"name", name}}}});
    events.push_back({{"name", "thread_sort_index"},
                      {"ph", "M"},
                      {"pid", 1},
                      {"tid", lane + 1},
                      {"args", {{"sort_index", lane}}}});
  }
  for (const Span& s : spans) {
    json args = {{"steps", std::to_string(s.completed) + "/" + std::to_string(s.total)}, {"early", s.early}};
    if (s.cut) args["ended_with_parent"] = true;
    const int64_t ts = us(s.start);
    events.push_back({{"name", s.name},
                      {"cat", "phase"},
                      {"ph", "X"},
                      {"ts", ts},
                      {"dur", us(s.end) - ts},
                      {"pid", 1},
                      {"tid", s.lane + 1},
                      {"args", args}});
  }
  for (const Instant& i : instants_) {
    events.push_back({{"name", i.name},
                      {"cat", "build"},
                      {"ph", "i"},
                      {"s", "g"},
                      {"ts", us(i.t)},
                      {"pid", 1},
                      {"tid", 1},
                      {"args", {{"detail", i.detail}}}});
  }
  // Names and messages are untrusted bytes: invalid UTF-8 becomes U+FFFD, as in the
  // event stream, instead of an exception out of the sink.
  return json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump(-1, ' ', false, json::error_handler_t::replace) +
         "\n";
}

std::unique_ptr<TraceSink> TraceSink::Open(const std::string& path, std::string* error) {
  // Checked now, so that an unwritable path fails before the build: the folder takes a
  // temporary file (discarded here), as it must at Close().
  std::string why;
  if (!AtomicFile::Create(path, &why)) {
    *error = "cannot write the trace: " + why;
    return nullptr;
  }
  return std::unique_ptr<TraceSink>(new TraceSink(path));
}

void TraceSink::Close() {
  if (closed_) return;
  closed_ = true;
  std::string why;
  if (!WriteFileAtomically(path_, builder_.Json(), &why)) error_ = "could not write the trace: " + why;
}

}  // namespace trtwatch
