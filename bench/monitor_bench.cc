// Cost of TensorRT's progress callbacks: trtwatch's Monitor against the naive monitor
// that examples use (one mutex; on every callback, copy the whole phase map and publish
// the copy inline to the display). Two workloads, each at 1, 4 and 16 threads:
//  - step-heavy: stepComplete on a long phase of each thread's own, with a fast sink
//    and a slow one (1 ms per event); ns per stepComplete.
//  - phase-heavy: many short phases, the same name on every thread at once (TensorRT's
//    tactic timing): phaseStart, two steps, phaseFinish; ns per phase (4 callbacks).
// Ratios: bench/compare.py.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <limits>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/build_session.h"
#include "core/clock.h"
#include "core/sink.h"

namespace trtwatch {
namespace {

constexpr int kMaxThreads = 16;
constexpr int kOtherPhases = 48;  // a mid-build tree: finished and active phases
constexpr auto kSlowSinkDelay = std::chrono::milliseconds(1);

// Each thread's next step, kept across the repeated calls of one benchmark run so
// that every call reports a new, increasing step (the monitor ignores repeats).
// Slot i is touched only by the thread with index i; runs are sequential. One cache
// line each: the harness must not make the threads share a written line.
struct alignas(64) NextStep {
  int32_t value = 0;
};
NextStep g_next_step[kMaxThreads];

std::string WorkerPhase(int thread) { return "Finding fastest tactic for node " + std::to_string(thread); }

// ---- trtwatch ----

class CountingSink final : public Sink {
 public:
  explicit CountingSink(bool slow) : slow_(slow) {}
  void OnEvent(const Event&) override {
    if (slow_) std::this_thread::sleep_for(kSlowSinkDelay);
  }

 private:
  const bool slow_;
};

struct TrtwatchFixture {
  std::unique_ptr<CountingSink> sink;
  std::unique_ptr<BuildSession> session;
  std::thread build;  // the session's Run(), parked until teardown
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  bool ready = false;
};
TrtwatchFixture* g_trtwatch = nullptr;

void SetUpTrtwatch(bool slow) {
  std::fill(std::begin(g_next_step), std::end(g_next_step), NextStep{});
  g_trtwatch = new TrtwatchFixture;
  g_trtwatch->sink = std::make_unique<CountingSink>(slow);
  g_trtwatch->session = std::make_unique<BuildSession>(SteadyClock::Instance(),
                                                       std::vector<Sink*>{g_trtwatch->sink.get()}, SessionOptions{});
  g_trtwatch->build = std::thread([] {
    g_trtwatch->session->Run(BuildInfo{}, [](Monitor& m) {
      m.phaseStart("Building engine", nullptr, 6);
      for (int i = 0; i < kOtherPhases; ++i) {
        const std::string name = "Measuring tactic time " + std::to_string(i);
        m.phaseStart(name.c_str(), "Building engine", 4);
        if (i % 2 == 0) m.phaseFinish(name.c_str());
      }
      for (int t = 0; t < kMaxThreads; ++t) {
        m.phaseStart(WorkerPhase(t).c_str(), "Building engine", std::numeric_limits<int32_t>::max());
      }
      std::unique_lock<std::mutex> lock(g_trtwatch->mu);
      g_trtwatch->ready = true;
      g_trtwatch->cv.notify_all();
      g_trtwatch->cv.wait(lock, [] { return g_trtwatch->done; });
      return BuildOutcome{true, ""};
    });
  });
  std::unique_lock<std::mutex> lock(g_trtwatch->mu);
  g_trtwatch->cv.wait(lock, [] { return g_trtwatch->ready; });
}

void TearDownTrtwatch() {
  {
    std::lock_guard<std::mutex> lock(g_trtwatch->mu);
    g_trtwatch->done = true;
  }
  g_trtwatch->cv.notify_all();
  g_trtwatch->build.join();
  delete g_trtwatch;
  g_trtwatch = nullptr;
}

void BM_Trtwatch(benchmark::State& state) {
  Monitor& monitor = g_trtwatch->session->monitor();
  const std::string name = WorkerPhase(state.thread_index());
  int32_t& step = g_next_step[state.thread_index()].value;
  for (auto _ : state) benchmark::DoNotOptimize(monitor.stepComplete(name.c_str(), step++));
}

// ---- the naive monitor ----

struct NaivePhase {
  std::string parent;
  int32_t total = 0;
  int32_t step = -1;
  bool done = false;
};
using PhaseMap = std::map<std::string, NaivePhase>;

class NaiveMonitor {
 public:
  explicit NaiveMonitor(bool slow) : slow_(slow) {}
  void phaseStart(const char* name, const char* parent, int32_t steps) {
    std::lock_guard<std::mutex> lock(mu_);
    phases_[name] = NaivePhase{parent ? parent : "", steps};
    Publish();
  }
  bool stepComplete(const char* name, int32_t step) {
    std::lock_guard<std::mutex> lock(mu_);
    phases_[name].step = step;
    Publish();
    return true;
  }
  void phaseFinish(const char* name) {
    std::lock_guard<std::mutex> lock(mu_);
    phases_[name].done = true;
    Publish();
  }

 private:
  void Publish() {  // the display gets its own copy, drawn inline
    PhaseMap copy = phases_;
    benchmark::DoNotOptimize(copy);
    if (slow_) std::this_thread::sleep_for(kSlowSinkDelay);
  }
  const bool slow_;
  std::mutex mu_;
  PhaseMap phases_;
};
NaiveMonitor* g_naive = nullptr;

void SetUpNaive(bool slow) {
  std::fill(std::begin(g_next_step), std::end(g_next_step), NextStep{});
  g_naive = new NaiveMonitor(slow);
  g_naive->phaseStart("Building engine", nullptr, 6);
  for (int i = 0; i < kOtherPhases; ++i) {
    const std::string name = "Measuring tactic time " + std::to_string(i);
    g_naive->phaseStart(name.c_str(), "Building engine", 4);
    if (i % 2 == 0) g_naive->phaseFinish(name.c_str());
  }
  for (int t = 0; t < kMaxThreads; ++t) {
    g_naive->phaseStart(WorkerPhase(t).c_str(), "Building engine", std::numeric_limits<int32_t>::max());
  }
}

void BM_Naive(benchmark::State& state) {
  const std::string name = WorkerPhase(state.thread_index());
  int32_t& step = g_next_step[state.thread_index()].value;
  for (auto _ : state) benchmark::DoNotOptimize(g_naive->stepComplete(name.c_str(), step++));
}

void TearDownNaive() {
  delete g_naive;
  g_naive = nullptr;
}

// Phase-heavy: every iteration is one short phase under the thread's own parent; all
// threads use the same child name at once, so lookups meet same-named phases.
constexpr char kShortPhase[] = "Measuring tactic time";

template <class M>
void ShortPhases(M& monitor, benchmark::State& state) {
  const std::string parent = WorkerPhase(state.thread_index());
  for (auto _ : state) {
    monitor.phaseStart(kShortPhase, parent.c_str(), 2);
    benchmark::DoNotOptimize(monitor.stepComplete(kShortPhase, 0));
    benchmark::DoNotOptimize(monitor.stepComplete(kShortPhase, 1));
    monitor.phaseFinish(kShortPhase);
  }
}
void BM_Trtwatch_ShortPhases(benchmark::State& s) { ShortPhases(g_trtwatch->session->monitor(), s); }
void BM_Naive_ShortPhases(benchmark::State& s) { ShortPhases(*g_naive, s); }

void BM_Trtwatch_FastSink(benchmark::State& s) { BM_Trtwatch(s); }
void BM_Trtwatch_SlowSink(benchmark::State& s) { BM_Trtwatch(s); }
void BM_Naive_FastSink(benchmark::State& s) { BM_Naive(s); }
void BM_Naive_SlowSink(benchmark::State& s) { BM_Naive(s); }

// Setup/Teardown run once per thread count, outside the timed region.
BENCHMARK(BM_Trtwatch_FastSink)
    ->Setup([](const benchmark::State& s) { if (s.thread_index() == 0) SetUpTrtwatch(false); })
    ->Teardown([](const benchmark::State& s) { if (s.thread_index() == 0) TearDownTrtwatch(); })
    ->Threads(1)->Threads(4)->Threads(16)->UseRealTime();
BENCHMARK(BM_Trtwatch_SlowSink)
    ->Setup([](const benchmark::State& s) { if (s.thread_index() == 0) SetUpTrtwatch(true); })
    ->Teardown([](const benchmark::State& s) { if (s.thread_index() == 0) TearDownTrtwatch(); })
    ->Threads(1)->Threads(4)->Threads(16)->UseRealTime();
BENCHMARK(BM_Naive_FastSink)
    ->Setup([](const benchmark::State& s) { if (s.thread_index() == 0) SetUpNaive(false); })
    ->Teardown([](const benchmark::State& s) { if (s.thread_index() == 0) TearDownNaive(); })
    ->Threads(1)->Threads(4)->Threads(16)->UseRealTime();
BENCHMARK(BM_Naive_SlowSink)
    ->Setup([](const benchmark::State& s) { if (s.thread_index() == 0) SetUpNaive(true); })
    ->Teardown([](const benchmark::State& s) { if (s.thread_index() == 0) TearDownNaive(); })
    ->Threads(1)->Threads(4)->Threads(16)->UseRealTime();

// A fixed count: trtwatch keeps every phase's record until the build ends, and the
// benchmark's one build would otherwise hold millions of them.
constexpr int64_t kShortPhaseIterations = 10000;
BENCHMARK(BM_Trtwatch_ShortPhases)
    ->Setup([](const benchmark::State& s) { if (s.thread_index() == 0) SetUpTrtwatch(false); })
    ->Teardown([](const benchmark::State& s) { if (s.thread_index() == 0) TearDownTrtwatch(); })
    ->Iterations(kShortPhaseIterations)->Threads(1)->Threads(4)->Threads(16)->UseRealTime();
BENCHMARK(BM_Naive_ShortPhases)
    ->Setup([](const benchmark::State& s) { if (s.thread_index() == 0) SetUpNaive(false); })
    ->Teardown([](const benchmark::State& s) { if (s.thread_index() == 0) TearDownNaive(); })
    ->Iterations(kShortPhaseIterations)->Threads(1)->Threads(4)->Threads(16)->UseRealTime();

}  // namespace
}  // namespace trtwatch

BENCHMARK_MAIN();
