// Pure text formatting shared by the human-facing sinks. No I/O, no terminal.
#pragma once

#include <string>
#include <string_view>

#include "core/build_result.h"

namespace trtwatch {

// "0.4s", "12.3s", "3m05s", "1h02m".
std::string FormatDuration(double seconds);

// How long ago, in the largest whole unit: "40 seconds", "1 minute", "5 hours", "3 days".
std::string FormatAge(double seconds);

// A cache hit, for a view: "reused the engine built 3 days ago in 14m02s (key 3e78f9d53e9c)";
// empty unless `cache` is a hit.
std::string FormatReuse(const CacheUse& cache);

// The value of a backend fact ("profile", "seed", ...); empty when absent.
std::string Fact(const Facts& facts, const std::string& key);

// What is being built, for a view's first line: "tensorrt build of model.onnx"; without
// the model's name (a build watched through the library, whose network has no file)
// "tensorrt build", and "build" without a backend either. A replay names the recorded
// build from its facts: "REPLAY of build b_… (tensorrt build of model.onnx)".
std::string BuildTitle(const std::string& backend, const std::string& model, const Facts& facts = {});

// "build succeeded", "build timed out", ...
std::string StatusPhrase(BuildStatus status);

// One line for a cancelled build's latency: "cancel latency: 12 ms to the first
// refusal, 30 ms until the builder returned".
std::string FormatCancelLatency(const CancelLatency& latency);

// The remaining time as a range a person reads: "about 4–6 min left, from 7 earlier
// builds" (seconds under 90 s, hours from 2 h), "…on similar GPUs" for a similar key,
// "longer than any of the 7 earlier builds" once it is, and "no ETA: …" without
// enough history. `since` counts the range down: seconds since the estimate came.
// `unicode` false writes "-" for the dash.
std::string EstimateText(const Estimate& estimate, double since, bool unicode = true);

}  // namespace trtwatch
