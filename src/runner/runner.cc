#include "runner/runner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <utility>

#include "core/build_id.h"
#include "platform/terminal.h"
#include "history/build_recorder.h"
#include "runner/duration.h"
#include "runner/estimate_feed.h"
#include "runner/process_control.h"
#include "sinks/jsonl_sink.h"
#include "sinks/plain_sink.h"
#include "sinks/trace_sink.h"
#include "sinks/tty_sink.h"

namespace trtwatch {

namespace {

// SignalWatch allows one watcher per process: the runner that holds it.
std::atomic<bool> g_signals_taken{false};

// The sink that shows progress in `mode` (null for quiet); `*view` is set to the live
// view when there is one, for signal handling.
std::unique_ptr<Sink> MakeProgressSink(const OutputMode& mode, const Clock& clock, TtySink** view) {
  switch (mode.progress) {
    case ProgressMode::kJson:
      return std::make_unique<JsonlSink>(stdout);
    case ProgressMode::kPlain:
      return std::make_unique<PlainSink>(stderr);
    case ProgressMode::kTty: {
      TtyOptions tty;
      tty.fd = 2;
      tty.color = mode.color;
      tty.unicode = mode.unicode;
      auto sink = std::make_unique<TtySink>(clock, tty);
      *view = sink.get();
      return sink;
    }
    case ProgressMode::kQuiet:
      break;
  }
  return nullptr;
}

bool Positive(const std::optional<double>& seconds) { return !seconds || *seconds > 0; }

Facts KeyParts(const keys::BuildKey& key) {
  Facts parts;
  for (const keys::KeyPart& part : key.parts) parts.emplace_back(part.name, part.value);
  return parts;
}

// Damaged history lines could be many: a few are shown, the rest counted.
void PrintHistoryWarnings(const std::string& program, const std::vector<std::string>& warnings) {
  constexpr size_t kShown = 3;
  for (size_t i = 0; i < warnings.size() && i < kShown; ++i) {
    std::fprintf(stderr, "%s: warning: history: %s\n", program.c_str(), warnings[i].c_str());
  }
  if (warnings.size() > kShown) {
    std::fprintf(stderr, "%s: warning: history: %zu more like these\n", program.c_str(), warnings.size() - kShown);
  }
}

// What is wrong with the options' durations, empty if nothing.
[[nodiscard]] std::string OptionsProblem(const RunOptions& options) {
  if (!Positive(options.timeout) || !Positive(options.stall_timeout) || !Positive(options.kill_after)) {
    return "timeout, stall timeout and kill-after must be greater than zero";
  }
  if (options.cancel_on_stall && !options.stall_timeout) {
    return "--stall-action cancel needs --stall-timeout DUR (how long a silence may last)";
  }
  return {};
}

// Opens the --trace and --events files as sinks into `owned`; the problem with one,
// naming its flag, or empty.
[[nodiscard]] std::string OpenFileSinks(const RunOptions& options, std::vector<std::unique_ptr<Sink>>& owned,
                                        TraceSink*& trace) {
  std::string error;
  if (!options.trace_file.empty()) {
    std::unique_ptr<TraceSink> sink = TraceSink::Open(options.trace_file, &error);
    if (!sink) return "--trace: " + error;
    trace = sink.get();
    owned.push_back(std::move(sink));
  }
  if (!options.events_file.empty()) {
    std::unique_ptr<JsonlSink> events = JsonlSink::OpenFile(options.events_file, &error);
    if (!events) return "--events: " + error;
    owned.push_back(std::move(events));
  }
  return {};
}

// The watchdog's limits, from the options.
SessionOptions SessionOptionsFor(const RunOptions& options) {
  SessionOptions session;
  session.watchdog.timeout = options.timeout;
  if (options.timeout) session.watchdog.timeout_text = "--timeout " + DurationText(*options.timeout);
  session.watchdog.stall_after = options.stall_timeout;
  session.watchdog.cancel_on_stall = options.cancel_on_stall;
  return session;
}

}  // namespace

struct Runner::Parts {
  std::unique_ptr<ConsoleSetup> console;  // first: restored after every sink closed
  RunOptions options;
  const Clock* clock = nullptr;
  std::vector<std::unique_ptr<Sink>> owned;
  TtySink* view = nullptr;
  TraceSink* trace = nullptr;
  std::unique_ptr<BuildSession> session;
  std::unique_ptr<ProcessControl> control;  // while the build runs
  std::optional<keys::BuildKey> key;
  std::unique_ptr<cache::EngineCache> engine_cache;  // a miss's, until the build is stored
  std::unique_ptr<FileLock> key_lock;               // held from the lookup until stored
  bool reused = false;
  bool holds_signals = false;
  // History: on when `history_file` is set.
  std::unique_ptr<history::HistoryFile> history_file;
  history::BuildRecorder* recorder = nullptr;  // one of `owned`
  std::unique_ptr<EstimateFeed> estimates;  // while the build runs

  ~Parts() {
    estimates.reset();
    control.reset();
    if (holds_signals) g_signals_taken.store(false);
  }
};

std::unique_ptr<Runner> Runner::Create(RunOptions options, std::string* error) {
  auto parts = std::make_unique<Parts>();
  parts->clock = options.clock != nullptr ? options.clock : &SteadyClock::Instance();
  if (!options.env) options.env = ProcessEnvironment();
  const bool terminal = options.stderr_is_terminal.value_or(IsTerminal(2));

  if (std::string problem = OptionsProblem(options); !problem.empty()) {
    *error = std::move(problem);
    return nullptr;
  }
  const std::optional<OutputMode> mode = ResolveOutputMode(options.output, options.env, terminal, error);
  if (!mode) return nullptr;

  // Files first: a bad path fails before anything is created or drawn.
  if (std::string problem = OpenFileSinks(options, parts->owned, parts->trace); !problem.empty()) {
    *error = std::move(problem);
    return nullptr;
  }
  if (options.handle_signals) {
    if (g_signals_taken.exchange(true)) {
      *error = "another build in this process already handles Ctrl+C and SIGTERM; only one can: "
               "turn signal handling off for this one";
      return nullptr;
    }
    parts->holds_signals = true;
  }
  parts->console = std::make_unique<ConsoleSetup>(/*escape_sequences=*/mode->progress == ProgressMode::kTty);
  if (std::unique_ptr<Sink> progress = MakeProgressSink(*mode, *parts->clock, &parts->view)) {
    parts->owned.push_back(std::move(progress));
  }

  if (!options.history.folder.empty()) {
    // The key may come with the build (Start); the recorder must be a sink from now.
    parts->history_file = std::make_unique<history::HistoryFile>(options.history.folder, options.history.limits);
    auto recorder = std::make_unique<history::BuildRecorder>();
    parts->recorder = recorder.get();
    parts->owned.push_back(std::move(recorder));
  }

  std::vector<Sink*> sinks;
  for (auto& sink : parts->owned) sinks.push_back(sink.get());
  sinks.insert(sinks.end(), options.sinks.begin(), options.sinks.end());
  parts->session = std::make_unique<BuildSession>(*parts->clock, sinks, SessionOptionsFor(options));
  parts->options = std::move(options);
  return std::unique_ptr<Runner>(new Runner(std::move(parts)));
}

Runner::Runner(std::unique_ptr<Parts> parts) : parts_(std::move(parts)) {}

Runner::~Runner() {
  // A build that started must conclude, so that every sink closes (the terminal is
  // restored, files are complete) even when the caller never called Finish.
  if (started_ && !finished_) Finish(BuildOutcome{false, "the build was abandoned before it returned"});
}

Monitor& Runner::monitor() { return parts_->session->monitor(); }

void Runner::Say(const std::string& line) {
  if (parts_->view != nullptr) parts_->view->Suspend();
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
  if (parts_->view != nullptr) parts_->view->Resume();
}

void Runner::SetKeyRecipe(keys::RecipeOutcome recipe) { parts_->options.key_recipe = std::move(recipe); }

const keys::BuildKey* Runner::key() const { return parts_->key ? &*parts_->key : nullptr; }

bool Runner::reused() const { return parts_->reused; }

std::vector<std::string> Runner::UseEngineCache(BuildInfo* info) {
  const RunOptions::EngineCacheUse& use = *parts_->options.engine_cache;
  if (!parts_->key) return {"the engine cache is not used: this build has no key"};
  const keys::BuildKey& key = *parts_->key;
  cache::OpenOutcome opened = cache::EngineCache::Open(use.folder, use.limits);
  if (!opened.cache) return {opened.error};
  std::string error;
  const std::string& program = parts_->options.program;
  parts_->key_lock = opened.cache->LockKey(
      key.digest,
      [&](long pid) {
        std::fprintf(stderr, "%s: an identical build (key %s, process %ld) is running: waiting to reuse its engine\n",
                     program.c_str(), key.digest.substr(0, 12).c_str(), pid);
      },
      &error);
  if (!parts_->key_lock) return {"the engine cache is not used: " + error};
  std::vector<std::string> warnings;
  const cache::Lookup lookup = opened.cache->Find(key);
  if (!lookup.warning.empty()) warnings.push_back(lookup.warning);
  if (lookup.outcome == cache::Lookup::Outcome::kHit) {
    const cache::PlaceOutcome placed = opened.cache->Place(*lookup.entry, use.engine);
    if (placed.method) {
      const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
      info->cache = {key.digest, "hit", std::max(0.0, now - lookup.entry->built_unix), lookup.entry->build_seconds};
      parts_->reused = true;
      parts_->key_lock.reset();
      return warnings;
    }
    // Damaged bytes were quarantined (the error says where): a miss, as an unplaceable hit is.
    warnings.push_back(placed.damaged ? placed.error
                                      : "the cached engine could not be placed at \"" + use.engine + "\" (" +
                                            placed.error + "): building it");
  }
  info->cache.state = "miss";
  parts_->engine_cache = std::move(opened.cache);
  return warnings;
}

void Runner::StoreInEngineCache(const BuildResult& result) {
  const RunOptions::EngineCacheUse& use = *parts_->options.engine_cache;
  if (result.succeeded()) {
    const cache::StoreOutcome stored = parts_->engine_cache->Store(*parts_->key, use.model, use.engine, result.elapsed);
    if (!stored.stored) {
      std::fprintf(stderr, "%s: warning: the engine was not kept in the engine cache: %s\n",
                   parts_->options.program.c_str(), stored.error.c_str());
    }
  } else {
    parts_->engine_cache->CountMiss();  // a failed or cancelled build stores nothing
  }
  parts_->engine_cache.reset();
  parts_->key_lock.reset();
}

void Runner::Start(BuildInfo info) {
  started_ = true;
  if (info.build_id.empty()) info.build_id = NewBuildId();
  const RunOptions& options = parts_->options;
  std::string key_error;
  if (options.key_recipe && options.key_recipe->recipe) {
    keys::KeyOutcome computed = keys::ComputeBuildKey(*options.key_recipe->recipe);
    parts_->key = std::move(computed.key);
    key_error = std::move(computed.error);
    if (parts_->key) info.cache.key = parts_->key->digest;
  } else if (options.key_recipe) {
    key_error = options.key_recipe->error;
  }
  std::vector<std::string> warnings;
  if (!key_error.empty()) warnings.push_back("no build key: " + key_error);
  if (options.engine_cache) {
    for (std::string& warning : UseEngineCache(&info)) warnings.push_back(std::move(warning));
  }
  // A hit the caller found in the cache itself (EngineCache::GetOrBuild under a Watch):
  // no build runs, so the history learns nothing from it.
  if (info.cache.state == "hit") parts_->reused = true;
  if (options.handle_signals || options.kill_after) {
    ProcessControlOptions control;
    control.watch_signals = options.handle_signals;
    control.kill_after = options.kill_after;
    if (options.kill_after) control.kill_after_text = "--kill-after " + DurationText(*options.kill_after);
    parts_->control = std::make_unique<ProcessControl>(monitor(), parts_->view, control);
  }
  parts_->session->Start(info);
  for (const std::string& warning : warnings) monitor().Log(Severity::kWarning, warning);
  StartEstimates();
}

void Runner::StartEstimates() {
  // Without a key there is nothing to know this build by: it is neither estimated nor
  // remembered; nor is an engine the cache reused (no build ran: its time says nothing).
  if (parts_->recorder == nullptr || !parts_->key || parts_->reused) return;
  // Only the entries the estimate may use: the history's index finds them.
  constexpr size_t kMaxEarlierBuilds = 20;
  const Facts key_parts = KeyParts(*parts_->key);
  history::ReadResult earlier =
      parts_->history_file->ReadForEstimate(parts_->key->digest, key_parts, kMaxEarlierBuilds);
  PrintHistoryWarnings(parts_->options.program, earlier.warnings);
  parts_->estimates = std::make_unique<EstimateFeed>(
      monitor(), *parts_->recorder,
      history::SelectEarlierBuilds(earlier.entries, parts_->key->digest, key_parts, kMaxEarlierBuilds));
}

BuildResult Runner::Finish(const BuildOutcome& outcome) {
  finished_ = true;
  if (parts_->control) parts_->control->BuildReturned();
  if (parts_->estimates) parts_->estimates->Stop();
  BuildResult result = parts_->session->Finish(outcome);
  if (parts_->engine_cache) StoreInEngineCache(result);
  if (parts_->estimates) result.estimate = parts_->estimates->last();
  Remember(result);
  bool terminated = false;
  if (parts_->control) {
    const std::optional<ProcessSignal> signal = parts_->control->first_signal();
    terminated = signal && *signal != ProcessSignal::kInterrupt;
  }
  parts_->control.reset();
  if (parts_->holds_signals) {
    // The build is over: the next one may watch signals, even while this runner lives
    // on (a Python `with` block's watch outlives its build to show the result).
    parts_->holds_signals = false;
    g_signals_taken.store(false);
  }
  result.exit_code = ExitCodeFor(result, terminated);
  if (parts_->trace != nullptr && !parts_->trace->error().empty()) {
    std::fprintf(stderr, "%s: %s\n", parts_->options.program.c_str(), parts_->trace->error().c_str());
    if (result.exit_code == exit_code::kSucceeded) result.exit_code = exit_code::kFailed;
  }
  return result;
}

void Runner::Remember(const BuildResult& result) {
  if (parts_->recorder == nullptr || !started_ || !parts_->key || parts_->reused) return;
  history::HistoryEntry entry = parts_->recorder->Entry(result);
  entry.key = parts_->key->digest;
  entry.key_parts = KeyParts(*parts_->key);
  entry.finished_at = history::UnixNow();
  const history::AppendResult appended = parts_->history_file->Append(entry, entry.finished_at);
  if (appended.outcome != history::AppendResult::Outcome::kWritten) {
    PrintHistoryWarnings(parts_->options.program, {appended.warning});
  }
}

BuildResult Runner::Run(BuildInfo info, const BuildFunction& build) {
  Start(std::move(info));
  if (parts_->reused) return Finish(BuildOutcome{true, ""});  // the cache's engine is in place: no builder
  return Finish(CallBuild([&] { return build(monitor()); }));
}

int ExitCodeFor(const BuildResult& result, bool terminated_by_signal) {
  switch (result.status) {
    case BuildStatus::kSucceeded:
      return exit_code::kSucceeded;
    case BuildStatus::kFailed:
      return exit_code::kFailed;
    case BuildStatus::kTimedOut:
      return exit_code::kTimedOut;
    case BuildStatus::kCancelled:
      break;
  }
  switch (result.cancel_reason.value_or(CancelReason::kUser)) {
    case CancelReason::kTimeout:
    case CancelReason::kStall:
    case CancelReason::kBudget:
      return exit_code::kTimedOut;
    case CancelReason::kSignal:
      return terminated_by_signal ? exit_code::kTerminated : exit_code::kInterrupted;
    case CancelReason::kUser:
    case CancelReason::kApi:
    case CancelReason::kGroup:
    case CancelReason::kSlurmCancelled:
      return exit_code::kInterrupted;
  }
  return exit_code::kFailed;
}

}  // namespace trtwatch
