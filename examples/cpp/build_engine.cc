// build_engine: an ONNX model to a TensorRT engine, with trtwatch attached — live
// nested progress on a terminal (plain lines in CI, JSON events with --progress json),
// a time budget, and Ctrl+C that stops TensorRT at its next step.
//
//   build_engine MODEL.onnx ENGINE [--progress auto|tty|plain|json|quiet]
//                [--timeout SECONDS] [--events FILE.jsonl]
//
// Exits as `trtwatch build` does: 0 built, 1 failed, 2 usage, 124 timed out,
// 130 Ctrl+C, 143 SIGTERM.
#include <trtwatch/tensorrt.h>
#include <trtwatch/trtwatch.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "onnx_engine.h"

namespace {

int Usage(const char* why) {
  std::fprintf(stderr,
               "build_engine: %s\n"
               "usage: build_engine MODEL.onnx ENGINE [--progress auto|tty|plain|json|quiet] "
               "[--timeout SECONDS] [--events FILE.jsonl]\n",
               why);
  return trtwatch::exit_code::kUsage;
}

bool ParseProgress(const std::string& text, trtwatch::Progress* progress) {
  const std::pair<const char*, trtwatch::Progress> modes[] = {
      {"auto", trtwatch::Progress::kAuto}, {"tty", trtwatch::Progress::kTty},
      {"plain", trtwatch::Progress::kPlain}, {"json", trtwatch::Progress::kJson},
      {"quiet", trtwatch::Progress::kQuiet}};
  for (const auto& [name, mode] : modes) {
    if (text == name) {
      *progress = mode;
      return true;
    }
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return Usage("give a model and an engine path");
  const std::string model = argv[1];
  const std::string engine = argv[2];

  trtwatch::WatchOptions options;
  options.model = model;
  options.handle_signals = true;  // Ctrl+C / SIGTERM cancel at the next step
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--progress") {
      if (!ParseProgress(value, &options.progress)) return Usage("--progress takes auto, tty, plain, json or quiet");
    } else if (flag == "--timeout") {
      options.timeout = trtwatch::Seconds(std::atof(value.c_str()));
    } else if (flag == "--events") {
      options.events_file = value;
    } else {
      return Usage(("unknown option " + flag).c_str());
    }
  }

  try {
    trtwatch::Watch watch(options);                          // 1
    trtwatch::tensorrt::ProgressMonitor monitor(watch);      // 2
    trtwatch::tensorrt::Logger logger(watch);                // 3
    watch.AddFact("tensorrt_headers", trtwatch::tensorrt::HeaderVersion());

    std::unique_ptr<nvinfer1::IHostMemory> plan;
    const trtwatch::BuildResult result = watch.Run([&] {    // 4
      plan = BuildSerializedEngine(model, logger, monitor);
      return plan != nullptr;
    });
    if (result.succeeded() && !SaveEngine(*plan, engine)) {
      std::fprintf(stderr, "build_engine: cannot write %s\n", engine.c_str());
      return trtwatch::exit_code::kFailed;
    }
    return result.exit_code;                                 // 5
  } catch (const std::invalid_argument& e) {
    return Usage(e.what());
  }
}
