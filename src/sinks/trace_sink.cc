#include "sinks/trace_sink.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

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

namespace {

std::string TempPathFor(const std::string& path) {
  std::random_device random;
  return path + ".tmp-" + std::to_string(random()) + std::to_string(random());
}

// Writes `text` to `temp` ("wx": never over an existing file). Returns errno text or "".
std::string WriteNew(const std::string& temp, const std::string& text) {
  std::FILE* f = std::fopen(temp.c_str(), "wx");
  if (f == nullptr) return std::strerror(errno);
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int saved = errno;
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed) {
    std::remove(temp.c_str());
    return std::strerror(written ? errno : saved);
  }
  return "";
}

}  // namespace

std::unique_ptr<TraceSink> TraceSink::Open(const std::string& path, std::string* error) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    *error = "cannot write the trace to \"" + path + "\": it is a directory; give a file name such as build.json";
    return nullptr;
  }
  const std::string probe = TempPathFor(path);
  const std::string failure = WriteNew(probe, "");
  if (!failure.empty()) {
    *error = "cannot write the trace to \"" + path + "\": " + failure + " (does its directory exist and is it writable?)";
    return nullptr;
  }
  std::remove(probe.c_str());
  return std::unique_ptr<TraceSink>(new TraceSink(path));
}

void TraceSink::Close() {
  if (closed_) return;
  closed_ = true;
  const std::string temp = TempPathFor(path_);
  const std::string failure = WriteNew(temp, builder_.Json());
  if (!failure.empty()) {
    error_ = "could not write the trace to \"" + path_ + "\": " + failure;
    return;
  }
  std::error_code ec;
  std::filesystem::rename(temp, path_, ec);
  if (ec) {
    std::remove(temp.c_str());
    error_ = "could not write the trace to \"" + path_ + "\": " + ec.message();
  }
}

}  // namespace trtwatch
