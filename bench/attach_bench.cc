// The attach library's callback path against the core's own (docs/attach.md, goal:
// at most 2x): stepComplete on the core Monitor alone, and through the ChainedMonitor
// the attach library puts on a build's config, with and without a program monitor of
// its own. Same run, same thread counts; ns per call.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "attach/chained_monitor.h"
#include "core/clock.h"
#include "core/monitor.h"

namespace {

constexpr int kSteps = 1 << 30;

class ProgramMonitor : public nvinfer1::IProgressMonitor {
 public:
  void phaseStart(char const*, char const*, int32_t) noexcept override {}
  bool stepComplete(char const*, int32_t) noexcept override { return true; }
  void phaseFinish(char const*) noexcept override {}
};

trtwatch::SteadyClock g_clock;
std::unique_ptr<trtwatch::Monitor> g_monitor;

void Setup(const benchmark::State&) { g_monitor = std::make_unique<trtwatch::Monitor>(g_clock); }
void Teardown(const benchmark::State&) { g_monitor.reset(); }

std::string ThreadPhase(const benchmark::State& state) { return "phase " + std::to_string(state.thread_index()); }

void BM_Core_StepComplete(benchmark::State& state) {
  const std::string name = ThreadPhase(state);
  g_monitor->phaseStart(name.c_str(), nullptr, kSteps);
  int32_t step = 0;
  for (auto _ : state) benchmark::DoNotOptimize(g_monitor->stepComplete(name.c_str(), step++));
}

void BM_Attach_StepComplete(benchmark::State& state) {
  const std::string name = ThreadPhase(state);
  trtwatch::attach::ChainedMonitor chained(*g_monitor, nullptr);
  nvinfer1::IProgressMonitor* monitor = &chained;  // through the vtable, as TensorRT calls it
  monitor->phaseStart(name.c_str(), nullptr, kSteps);
  int32_t step = 0;
  for (auto _ : state) benchmark::DoNotOptimize(monitor->stepComplete(name.c_str(), step++));
}

void BM_Attach_StepCompleteWithProgramMonitor(benchmark::State& state) {
  const std::string name = ThreadPhase(state);
  ProgramMonitor own;
  trtwatch::attach::ChainedMonitor chained(*g_monitor, &own);
  nvinfer1::IProgressMonitor* monitor = &chained;
  monitor->phaseStart(name.c_str(), nullptr, kSteps);
  int32_t step = 0;
  for (auto _ : state) benchmark::DoNotOptimize(monitor->stepComplete(name.c_str(), step++));
}

}  // namespace

BENCHMARK(BM_Core_StepComplete)->Setup(Setup)->Teardown(Teardown)->Threads(1)->Threads(2);
BENCHMARK(BM_Attach_StepComplete)->Setup(Setup)->Teardown(Teardown)->Threads(1)->Threads(2);
BENCHMARK(BM_Attach_StepCompleteWithProgramMonitor)->Setup(Setup)->Teardown(Teardown)->Threads(1)->Threads(2);

BENCHMARK_MAIN();
