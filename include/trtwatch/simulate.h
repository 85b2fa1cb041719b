// Simulate: a TensorRT-like build, without TensorRT or a GPU, through a Watch — the
// same path (views, events, timeout, cancel, signals, result) a real build takes, so
// that front ends (a GUI, a notebook, the Python module) can be built and tested
// anywhere. The build comes from a profile (docs/simulator.md): one of
// SimulationProfiles() or a JSON file. Nothing is written: no engine exists.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <trtwatch/result.h>
#include <trtwatch/watch.h>

namespace trtwatch {

struct SimulateOptions {
  std::string profile = "small-cnn";  // a built-in profile's name, or a profile file's path
  uint64_t seed = 1;                  // the same seed gives the same build
  double speed = 1.0;                 // > 0; 10 runs ten times as fast
};

// Runs the simulated build through `watch` on this thread: build_start names the
// backend "simulated" and the profile, phases are reported from several threads as
// TensorRT's builder reports them, and a cancel stops the build at its next step.
// Throws std::invalid_argument (an unknown profile, a speed <= 0) before the build
// starts, std::logic_error when the watch already ran a build.
BuildResult Simulate(Watch& watch, const SimulateOptions& options = {});

// The built-in profiles' names.
std::vector<std::string> SimulationProfiles();

}  // namespace trtwatch
