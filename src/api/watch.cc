// The public Watch (include/trtwatch/watch.h): WatchOptions translated into the shared
// runner's options, and the runner driven around the caller's own build call.
#include <trtwatch/watch.h>

#include <deque>
#include <stdexcept>
#include <utility>

#include "core/build_id.h"
#include "core/mutex.h"
#include "runner/history_folder.h"
#include "runner/runner.h"

namespace trtwatch {

namespace {

constexpr std::string_view kProgressNames[] = {"auto", "tty", "plain", "json", "quiet"};
constexpr std::string_view kColorNames[] = {"auto", "always", "never"};

std::optional<double> ToSeconds(const std::optional<Seconds>& d) {
  if (!d) return std::nullopt;
  return d->count();
}

}  // namespace

struct Watch::State {
  std::vector<std::shared_ptr<Sink>> sinks;  // kept alive for the runner
  std::unique_ptr<Runner> runner;
  BuildInfo info;

  // The latest error lines from Log, for the message of a failed build. Log may be
  // called from any TensorRT thread.
  static constexpr size_t kKeptErrors = 5;
  Mutex mu;
  std::deque<std::string> errors GUARDED_BY(mu);

  std::string RecentErrors() EXCLUDES(mu) {
    MutexLock lock(&mu);
    std::string text;
    for (const std::string& line : errors) text += (text.empty() ? "" : "\n") + line;
    return text;
  }
};

Watch::Watch(WatchOptions options) : state_(std::make_unique<State>()) {
  RunOptions run;
  run.output.progress = std::string(kProgressNames[static_cast<size_t>(options.progress)]);
  run.output.color = std::string(kColorNames[static_cast<size_t>(options.color)]);
  run.events_file = std::move(options.events_file);
  run.trace_file = std::move(options.trace_file);
  run.timeout = ToSeconds(options.timeout);
  run.stall_timeout = ToSeconds(options.stall_timeout);
  run.cancel_on_stall = options.stall_action == StallAction::kCancel;
  run.kill_after = ToSeconds(options.kill_after);
  run.handle_signals = options.handle_signals;
  run.program = "trtwatch";
  const HistoryFolder history = ChooseHistoryFolder(options.history, options.no_history, ProcessEnvironment());
  run.history.folder = history.path;  // none found: no history, never an error
  run.history.limits.max_entries = history.max_entries;
  for (const std::shared_ptr<Sink>& sink : options.sinks) {
    if (!sink) throw std::invalid_argument("trtwatch::WatchOptions::sinks holds a null sink; remove it");
    run.sinks.push_back(sink.get());
  }
  state_->sinks = std::move(options.sinks);
  std::string error;
  state_->runner = Runner::Create(std::move(run), &error);
  if (!state_->runner) throw std::invalid_argument("trtwatch::Watch: " + error);
  monitor_ = &state_->runner->monitor();
  state_->info.backend = std::move(options.backend);
  state_->info.model = std::move(options.model);
  state_->info.facts = std::move(options.facts);
  state_->info.build_id = NewBuildId();
}

Watch::~Watch() = default;

Runner& Watch::runner() { return *state_->runner; }  // the runner concludes a build left unfinished

void Watch::phaseStart(char const* phaseName, char const* parentPhase, int32_t nbSteps) noexcept {
  monitor_->phaseStart(phaseName, parentPhase, nbSteps);
}

bool Watch::stepComplete(char const* phaseName, int32_t step) noexcept {
  return monitor_->stepComplete(phaseName, step);
}

void Watch::phaseFinish(char const* phaseName) noexcept { monitor_->phaseFinish(phaseName); }

void Watch::Log(Severity severity, std::string_view message) noexcept {
  monitor_->Log(severity, message);
  if (severity > Severity::kError) return;
  try {
    MutexLock lock(&state_->mu);
    state_->errors.emplace_back(message);
    if (state_->errors.size() > State::kKeptErrors) state_->errors.pop_front();
  } catch (...) {
    // Out of memory: the line is in the stream; only the failure message lacks it.
  }
}

void Watch::AddFact(std::string key, std::string value) {
  if (state_->runner->started()) throw std::logic_error("trtwatch::Watch::AddFact: the build already started");
  state_->info.facts.emplace_back(std::move(key), std::move(value));
}

void Watch::Describe(std::string backend, std::string model, const Facts& facts) {
  if (state_->runner->started()) throw std::logic_error("trtwatch::Simulate: a Watch runs one build, once");
  state_->info.backend = std::move(backend);
  state_->info.model = std::move(model);
  state_->info.facts.insert(state_->info.facts.begin(), facts.begin(), facts.end());
}

void Watch::DescribeCache(const std::vector<std::pair<std::string, std::string>>& key_parts, CacheUse use) {
  if (state_->runner->started()) throw std::logic_error("trtwatch::EngineCache::GetOrBuild: the watch already started");
  keys::KeyRecipe recipe;
  for (const auto& [name, value] : key_parts) recipe.parts.push_back({name, value});
  state_->runner->SetKeyRecipe(keys::RecipeOutcome{std::move(recipe), {}});
  state_->info.cache = std::move(use);
}

const std::string& Watch::model() const { return state_->info.model; }

void Watch::Start() {
  if (state_->runner->started()) throw std::logic_error("trtwatch::Watch::Start: a Watch runs one build, once");
  state_->runner->Start(state_->info);
}

BuildResult Watch::Finish(bool engine_built, std::string error) {
  if (!state_->runner->started()) throw std::logic_error("trtwatch::Watch::Finish: call Start first");
  if (state_->runner->finished()) throw std::logic_error("trtwatch::Watch::Finish: the build already finished");
  // A cancelled build's message is the cancel's; a failed one's, TensorRT's last words.
  if (!engine_built && error.empty() && !cancel_requested()) {
    error = state_->RecentErrors();
    if (error.empty()) error = "the build call returned no engine, and TensorRT logged no error";
  }
  return state_->runner->Finish(BuildOutcome{engine_built, std::move(error)});
}

BuildResult Watch::Run(const std::function<bool()>& build) {
  Start();
  const BuildOutcome outcome = CallBuild([&] { return BuildOutcome{build(), {}}; });
  return Finish(outcome.engine_built, outcome.error);
}

bool Watch::Cancel(std::string message, CancelReason reason) {
  return monitor_->RequestCancel(reason, std::move(message));
}

bool Watch::cancel_requested() const noexcept { return monitor_->IsCancelRequested(); }

const std::string& Watch::build_id() const { return state_->info.build_id; }

}  // namespace trtwatch
