#include "runner/attached_builds.h"

#include <charconv>
#include <cstdio>

namespace trtwatch {

struct AttachedBuilds::Build {
  std::unique_ptr<Runner> runner;
  std::map<int64_t, std::string> names;  // the program's phase ids -> names
  bool cancel_sent = false;
};

AttachedBuilds::AttachedBuilds(OptionsFor options_for, CancelSender send_cancel)
    : options_for_(std::move(options_for)), send_cancel_(std::move(send_cancel)) {}

AttachedBuilds::~AttachedBuilds() { EndAll("trtwatch run ended"); }

namespace {

// Reads "PID BUILD " off the front of `text`.
bool ReadKey(std::string_view* text, std::pair<int, int>* key) {
  for (int* part : {&key->first, &key->second}) {
    const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), *part);
    if (error != std::errc() || end == text->data() + text->size() || *end != ' ') return false;
    text->remove_prefix(static_cast<size_t>(end - text->data()) + 1);
  }
  return true;
}

}  // namespace

void AttachedBuilds::OnMessage(std::string_view message) {
  std::pair<int, int> key;
  Event event;
  std::string error;
  if (!ReadKey(&message, &key) || !EventFromJson(message, &event, &error)) {
    if (!said_malformed_) std::fprintf(stderr, "trtwatch run: ignoring a malformed message from the program\n");
    said_malformed_ = true;
    return;
  }
  if (event.type == EventType::kBuildStart) return Start(key, event);
  const auto found = active_.find(key);
  if (found == active_.end()) return;
  if (event.type == EventType::kBuildFinish) {
    return End(key, BuildOutcome{event.status == BuildStatus::kSucceeded, event.error});
  }
  Feed(*found->second, event);
}

void AttachedBuilds::Start(std::pair<int, int> key, const Event& event) {
  ++started_;
  std::string error;
  auto build = std::make_unique<Build>();
  RunOptions options = options_for_(started_, event);
  build->runner = Runner::Create(std::move(options), &error);
  if (!build->runner) {
    std::fprintf(stderr, "trtwatch run: build %d goes unwatched: %s\n", started_, error.c_str());
    return;
  }
  BuildInfo info;
  info.build_id = event.build;
  info.backend = event.backend;
  info.model = event.model;
  info.facts = event.facts;
  info.facts.emplace_back("build", std::to_string(started_));
  build->runner->Start(info);
  active_[key] = std::move(build);
}

void AttachedBuilds::Feed(Build& build, const Event& event) {
  Monitor& monitor = build.runner->monitor();
  switch (event.type) {
    case EventType::kPhaseStart: {
      build.names[event.id] = event.phase;
      const auto parent = build.names.find(event.parent);
      monitor.phaseStart(event.phase.c_str(), parent == build.names.end() ? nullptr : parent->second.c_str(),
                         event.total);
      break;
    }
    case EventType::kStep:
      (void)monitor.stepComplete(event.phase.c_str(), event.step);
      break;
    case EventType::kPhaseFinish:
      monitor.phaseFinish(event.phase.c_str());
      break;
    case EventType::kLog:
      monitor.Log(event.severity, event.message);
      break;
    default:
      break;  // the run's own runner makes its stall, estimate and cancel events
  }
}

void AttachedBuilds::End(std::pair<int, int> key, const BuildOutcome& outcome) {
  const auto found = active_.find(key);
  if (found == active_.end()) return;
  const BuildResult result = found->second->runner->Finish(outcome);
  if (result.exit_code == exit_code::kTimedOut || result.exit_code == exit_code::kInterrupted) {
    if (override_ != exit_code::kInterrupted) override_ = result.exit_code;
  }
  active_.erase(found);
}

void AttachedBuilds::ForwardCancels() {
  for (auto& [key, build] : active_) {
    if (!build->cancel_sent && build->runner->monitor().IsCancelRequested()) {
      build->cancel_sent = true;
      send_cancel_(key.first, key.second);
    }
  }
}

bool AttachedBuilds::CancelAll(CancelReason reason, const std::string& why, const std::string& notice) {
  if (active_.empty()) return false;
  for (auto& [key, build] : active_) build->runner->monitor().RequestCancel(reason, why);
  ForwardCancels();
  active_.begin()->second->runner->Say(notice);  // one line, above the views
  return true;
}

void AttachedBuilds::EndAll(const std::string& why) {
  while (!active_.empty()) End(active_.begin()->first, BuildOutcome{false, why});
}

}  // namespace trtwatch
