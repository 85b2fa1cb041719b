// The simulated builder's timing cache: how long each (node, tactic) took to measure,
// kept across builds in a JSON file of its own (docs/simulator.md, "Timing caches").
// A model of TensorRT's cache, not its format: like TensorRT's, a cache belongs to one
// GPU and builder version, a build given one skips the measurements it holds, and what
// a build measured is merged into the file after it (backends/timing_cache_file.h).
//
// The measurements are the phases named kMeasuringPhase: the node is the phase they
// run in (TensorRT's "Finding fastest tactic for LAYER"), the tactic that phase's step.
// Profiles whose nodes have the same names (two sizes of one transformer) share entries.
//
// Threading: the functions are pure. SimTimingCache is asked and taught by the build's
// worker threads at once (Has, Learn: under its lock); the rest runs on the build's
// thread before and after them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "backends/timing_cache_file.h"
#include "core/mutex.h"
#include "core/result.h"

namespace trtwatch::sim {

inline constexpr char kMeasuringPhase[] = "Measuring tactic time";
inline constexpr char kSimulatedBuilder[] = "trtwatch simulator 1";

// Who measured the timings. A cache made by another is refused, as TensorRT refuses
// one of another GPU or version.
struct CacheMaker {
  std::string builder;  // kSimulatedBuilder
  std::string gpu;      // the simulated GPU (docs/simulator.md)
  bool operator==(const CacheMaker&) const = default;
};

using TacticKey = std::pair<std::string, int32_t>;  // (node, tactic)

struct TimingCacheData {
  CacheMaker maker;
  std::map<TacticKey, int64_t> entries;  // -> the microseconds the measurement took
};

// The file's text; an error names what is wrong with it.
[[nodiscard]] Result<TimingCacheData> ParseTimingCache(std::string_view text);
std::string SerializeTimingCache(const TimingCacheData& cache);
// Adds the entries of `from` that `into` lacks (a timing measured once stays as it
// was); returns how many.
size_t MergeTimingCache(TimingCacheData& into, const TimingCacheData& from);

// One build's cache.
class SimTimingCache final : public TimingCacheOps {
 public:
  explicit SimTimingCache(CacheMaker maker);

  bool Load(std::string_view bytes) override;
  bool Attach(bool ignore_mismatch) override;
  std::optional<std::string> MergedInto(std::string_view current) override;
  std::optional<std::string> Serialize() override;
  std::string Reader() const override { return "the simulator"; }

  // Whether the attached cache holds the measurement (counted as a hit when it does).
  bool Has(const TacticKey& key);
  // A measurement the build made.
  void Learn(TacticKey key, int64_t us);
  int64_t hits();
  int64_t learnt();

 private:
  const CacheMaker maker_;
  Mutex mu_;
  TimingCacheData data_ GUARDED_BY(mu_);
  bool attached_ GUARDED_BY(mu_) = false;
  int64_t hits_ GUARDED_BY(mu_) = 0;
  int64_t learnt_ GUARDED_BY(mu_) = 0;
};

}  // namespace trtwatch::sim
