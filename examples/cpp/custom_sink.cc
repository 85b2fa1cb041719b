// custom_sink: your own consumer of trtwatch's event stream next to (or instead of)
// the built-in views. This one keeps a phase-time table that another thread reads
// while the build runs, and prints one line per finished top-level step.
//
//   custom_sink MODEL.onnx ENGINE
#include <trtwatch/tensorrt.h>
#include <trtwatch/trtwatch.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "onnx_engine.h"

namespace {

// Runs on its own delivery thread (never on TensorRT's): it may take its time, and
// what it shares with other threads it guards itself.
class PhaseTable final : public trtwatch::Sink {
 public:
  void OnEvent(const trtwatch::Event& event) override {
    if (event.type != trtwatch::EventType::kPhaseFinish) return;
    std::printf("[%7.3fs] finished %-24s %d/%d steps in %.3f s%s\n", event.t, event.phase.c_str(), event.completed,
                event.total, event.elapsed, event.early ? " (early)" : "");
    std::lock_guard<std::mutex> lock(mu_);
    seconds_[event.phase] += event.elapsed;
    ++finished_;
  }
  void Close() override { std::fflush(stdout); }

  int finished() const {
    std::lock_guard<std::mutex> lock(mu_);
    return finished_;
  }
  std::map<std::string, double> seconds() const {
    std::lock_guard<std::mutex> lock(mu_);
    return seconds_;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, double> seconds_ TRTWATCH_GUARDED_BY(mu_);  // phase name -> total
  int finished_ TRTWATCH_GUARDED_BY(mu_) = 0;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: custom_sink MODEL.onnx ENGINE\n");
    return trtwatch::exit_code::kUsage;
  }
  auto table = std::make_shared<PhaseTable>();
  trtwatch::WatchOptions options;
  options.progress = trtwatch::Progress::kQuiet;  // this sink is the only view
  options.sinks.push_back(table);
  options.model = argv[1];
  trtwatch::Watch watch(options);
  trtwatch::tensorrt::ProgressMonitor monitor(watch);
  trtwatch::tensorrt::Logger logger(watch);

  std::unique_ptr<nvinfer1::IHostMemory> plan;
  const trtwatch::BuildResult result = watch.Run([&] {
    plan = BuildSerializedEngine(argv[1], logger, monitor);
    return plan != nullptr;
  });
  if (result.succeeded() && !SaveEngine(*plan, argv[2])) return trtwatch::exit_code::kFailed;

  std::printf("%s in %.3f s; %d phases finished\n", std::string(trtwatch::BuildStatusName(result.status)).c_str(),
              result.elapsed, table->finished());
  for (const auto& [phase, seconds] : table->seconds()) std::printf("  %-24s %.3f s\n", phase.c_str(), seconds);
  return result.exit_code;
}
