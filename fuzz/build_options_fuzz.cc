// TensorRT option parsing (`trtwatch build` flags and the service's "options"): the
// input's lines fill the raw flags (shapes, memory sizes, levels); resolution succeeds
// or says why, and accepted shapes print back.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "backends/tensorrt/build_options.h"
#include "core/memory_size.h"
#include "fuzz_check.h"

namespace {
std::vector<std::string> Lines(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = text.find('\n', start);
    lines.emplace_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return lines;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trtwatch::trt;
  if (size == 0) return 0;
  const uint8_t bools = data[0];
  auto lines = Lines(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  lines.resize(8);
  RawBuildFlags raw;
  raw.fp16 = bools & 1;
  raw.bf16 = bools & 2;
  raw.int8 = bools & 4;
  raw.strongly_typed = bools & 8;
  raw.no_builder_cache = bools & 16;
  raw.error_on_timing_cache_miss = bools & 32;
  raw.timing_cache_ignore_mismatch = bools & 64;
  if (!lines[0].empty()) raw.mem_pool_size.push_back(lines[0]);
  raw.workspace = lines[1];
  raw.builder_optimization_level = lines[2];
  raw.max_aux_streams = lines[3];
  raw.max_threads = lines[4];
  raw.min_shapes = lines[5];
  raw.opt_shapes = lines[6];
  raw.max_shapes = lines[7];
  if ((bools & 128) != 0) raw.timing_cache = "cache.bin";

  BuildOptions options;
  std::string error;
  if (ResolveBuildOptions("model.onnx", "model.engine", raw, &options, &error)) {
    for (const Profile& profile : options.profiles) {
      for (const ShapeRange& range : profile) {
        FUZZ_CHECK(!range.input.empty());
        FormatShape(range.min);
        FormatShape(range.opt);
        FormatShape(range.max);
      }
    }
    for (int major : {9, 10, 11}) CheckForTensorRtMajor(options, major, &error);
  } else {
    FUZZ_CHECK(!error.empty());
  }

  // The parsers on their own, on the whole text.
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::pair<std::string, Shape>> shapes;
  error.clear();
  if (!ParseShapeList(text, "--minShapes", &shapes, &error)) FUZZ_CHECK(!error.empty());
  const trtwatch::MemorySize memory = trtwatch::ParseMemorySize(text, "--workspace");
  FUZZ_CHECK(memory.bytes.has_value() != !memory.error.empty());
  return 0;
}
