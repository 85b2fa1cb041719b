// Simulation profiles: the shape of a TensorRT-like build, described in JSON
// (docs/simulator.md). A profile is a tree of phase specs with step counts and
// durations given as fixed values or [low, high] ranges; a seed turns it into one
// concrete Plan.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace trtwatch::sim {

// A fixed value or an inclusive [low, high] range.
struct Range {
  int64_t low = 0;
  int64_t high = 0;
};

struct PhaseSpec {
  std::string name;               // may hold "{step}": the parent step's index
  Range steps{1, 1};
  Range step_ms{0, 0};            // work of each step besides its children
  std::map<int32_t, Range> silent_ms;  // step -> an extra silent stretch in that step
  std::optional<std::vector<int32_t>> at;  // parent steps that run this phase (default all)
  int32_t workers = 1;            // > 1: steps run on that many threads at once
  std::vector<PhaseSpec> children;
};

struct FailureSpec {
  std::string phase;  // the first instance of this phase fails ...
  int32_t step = 0;   // ... when it reaches this step
  std::string message;
};

// How much durations vary from seed to seed, as real builds of one model do (the
// machine's load, clocks, which tactics win): each build's durations are multiplied by
// one factor, each phase's own steps by another, drawn log-uniformly (e^(x·u), u
// uniform in [-1, 1]). 0: every seed takes the same time for the same tree.
struct Variation {
  double build = 0;  // the whole build: 0.2 means ×0.82 to ×1.22
  double phase = 0;  // each phase instance, on top
};

struct Profile {
  std::string name;
  std::string description;
  PhaseSpec root;
  std::optional<FailureSpec> failure;
  Variation variation;
  // The JSON text it was parsed from, its base profile's text after it: what the
  // build key digests (keys/simulated_key.h).
  std::string source;
};

// Parses a profile from JSON text. On error returns nullopt with the reason, naming
// the offending field, in `*error`.
std::optional<Profile> ParseProfile(const std::string& json_text, std::string* error);

// A built-in profile by name, or a JSON file by path. `*error` names the problem and
// lists the built-in profiles.
std::optional<Profile> LoadProfile(const std::string& name_or_path, std::string* error);

std::vector<std::string> BuiltinProfileNames();

}  // namespace trtwatch::sim
