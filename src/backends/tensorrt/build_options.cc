#include "backends/tensorrt/build_options.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <string_view>

#include "backends/timing_cache_file.h"
#include "core/memory_size.h"
#include "platform/file_access.h"

namespace trtwatch::trt {

namespace {

bool ParseInt(const std::string& text, const char* flag, int32_t low, int32_t high, std::optional<int32_t>* out,
              std::string* error) {
  if (text.empty()) return true;
  int32_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || value < low || value > high) {
    *error = std::string(flag) + ": \"" + text + "\" is not a whole number from " + std::to_string(low) + " to " +
             std::to_string(high);
    return false;
  }
  *out = value;
  return true;
}

bool ParseDim(std::string_view text, int64_t* value) {
  if (text.empty()) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return ec == std::errc() && ptr == text.data() + text.size() && *value >= 0;
}

std::string Folder(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

bool CheckOutputFolder(const std::string& path, const char* what, const char* flag, std::string* error) {
  if (InspectPath(path).kind == PathKind::kFolder) {
    *error = std::string(flag) + ": \"" + path + "\" is a folder; give the " + what + "'s file name, e.g. \"" +
             path + (path.back() == '/' ? "" : "/") + "model." + (std::string(what) == "engine" ? "engine" : "cache") +
             "\"";
    return false;
  }
  const std::string folder = Folder(path);
  const PathKind folder_kind = InspectPath(folder).kind;
  if (folder_kind == PathKind::kMissing) {
    *error = std::string(flag) + ": the folder \"" + folder + "\" for the " + what +
             " does not exist; create it first (mkdir -p " + folder + ") or write elsewhere";
    return false;
  }
  if (folder_kind != PathKind::kFolder) {
    *error = std::string(flag) + ": \"" + folder + "\" is not a folder; fix the " + what + "'s path";
    return false;
  }
  if (std::string reason; !CanAccess(folder, Access::kWrite, &reason)) {
    *error = std::string(flag) + ": cannot write in \"" + folder + "\" (" + reason +
             "); choose a folder you can write to";
    return false;
  }
  return true;
}

// "1x3x224x224" (or "scalar", trtexec's word for a 0-dimensional shape) as a shape;
// nullopt unless every piece is a non-negative whole number.
std::optional<Shape> ParseDims(const std::string& dims) {
  Shape shape;
  size_t d = 0;
  while (dims != "scalar") {
    const size_t x = dims.find('x', d);
    int64_t value = 0;
    if (!ParseDim(std::string_view(dims).substr(d, x == std::string::npos ? std::string::npos : x - d), &value)) {
      return std::nullopt;
    }
    shape.push_back(value);
    if (x == std::string::npos) break;
    d = x + 1;
  }
  return shape;
}

}  // namespace

bool ParseShapeList(const std::string& text, const char* flag, std::vector<std::pair<std::string, Shape>>* out,
                    std::string* error) {
  out->clear();
  if (text.empty()) return true;
  const std::string example = " (expected NAME:DIMxDIM..., e.g. input:1x3x224x224,mask:1x128)";
  auto fail = [&](const std::string& what) {
    *error = std::string(flag) + ": " + what;
    return false;
  };
  size_t pos = 0;
  while (pos <= text.size()) {
    std::string name;
    size_t colon;
    // trtexec lets a name that holds ':' or ',' be quoted: 'input:0':1x3.
    if (pos < text.size() && text[pos] == '\'') {
      const size_t close = text.find('\'', pos + 1);
      if (close == std::string::npos) return fail("unmatched quote in \"" + text + "\"" + example);
      name = text.substr(pos + 1, close - pos - 1);
      colon = close + 1;
      if (colon >= text.size() || text[colon] != ':') {
        return fail("expected ':' after the quoted name '" + name + "'" + example);
      }
    } else {
      const size_t comma = text.find(',', pos);
      const std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      const size_t last = item.find_last_of(':');
      if (last == std::string::npos) return fail("\"" + item + "\" has no input name" + example);
      name = item.substr(0, last);
      colon = pos + last;
    }
    if (name.empty()) return fail("an entry has an empty input name" + example);
    const size_t dims_begin = colon + 1;
    size_t dims_end = text.find(',', dims_begin);
    if (dims_end == std::string::npos) dims_end = text.size();
    const std::string dims = text.substr(dims_begin, dims_end - dims_begin);
    std::optional<Shape> shape = ParseDims(dims);
    if (!shape) {
      return fail("\"" + dims + "\" for input \"" + name +
                  "\" is not a shape of non-negative whole numbers joined by 'x' (or scalar)" + example);
    }
    if (shape->size() > 8) {
      return fail("input \"" + name + "\" has " + std::to_string(shape->size()) +
                  " dimensions; TensorRT allows at most 8");
    }
    for (const auto& [seen, unused] : *out) {
      if (seen == name) return fail("input \"" + name + "\" is given twice");
    }
    out->emplace_back(std::move(name), std::move(*shape));
    if (dims_end == text.size()) break;
    pos = dims_end + 1;
    if (pos == text.size()) return fail("trailing ',' in \"" + text + "\"" + example);
  }
  return true;
}

namespace {

// One optimization profile with trtexec's rules (sampleOptions.cpp, processShapes): a
// list not given for an input is filled from the others — min from opt, else max;
// opt from max, else min; max from opt, else min — with a notice, as trtexec warns.
bool ResolveProfile(const RawProfile& raw, int index, Profile* out, std::vector<std::string>* notices,
                    std::string* error) {
  const std::string where = index < 0 ? "" : " (--profile=" + std::to_string(index) + ")";
  std::vector<std::pair<std::string, Shape>> mins, opts, maxs;
  if (!ParseShapeList(raw.min_shapes, "--minShapes", &mins, error) ||
      !ParseShapeList(raw.opt_shapes, "--optShapes", &opts, error) ||
      !ParseShapeList(raw.max_shapes, "--maxShapes", &maxs, error)) {
    *error += where;
    return false;
  }
  auto find = [](const std::vector<std::pair<std::string, Shape>>& list, const std::string& name) -> const Shape* {
    for (const auto& [n, s] : list) {
      if (n == name) return &s;
    }
    return nullptr;
  };
  std::vector<std::string> names;
  for (const auto* list : {&mins, &opts, &maxs}) {
    for (const auto& [n, s] : *list) {
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    }
  }
  for (const std::string& name : names) {
    const Shape* min = find(mins, name);
    const Shape* opt = find(opts, name);
    const Shape* max = find(maxs, name);
    ShapeRange range;
    range.input = name;
    range.min = min ? *min : opt ? *opt : *max;
    range.opt = opt ? *opt : max ? *max : *min;
    range.max = max ? *max : opt ? *opt : *min;
    auto note = [&](const char* missing, const char* from, const Shape& shape) {
      notices->push_back(std::string(missing) + " not given for \"" + name + "\"" + where + ": using " + from + " (" +
                         FormatShape(shape) + "), as trtexec does");
    };
    if (!min) note("--minShapes", opt ? "--optShapes" : "--maxShapes", range.min);
    if (!opt) note("--optShapes", max ? "--maxShapes" : "--minShapes", range.opt);
    if (!max) note("--maxShapes", opt ? "--optShapes" : "--minShapes", range.max);
    if (range.min.size() != range.opt.size() || range.max.size() != range.opt.size()) {
      *error = "input \"" + name + "\"" + where + ": min " + FormatShape(range.min) + ", opt " +
               FormatShape(range.opt) + " and max " + FormatShape(range.max) +
               " must have the same number of dimensions";
      return false;
    }
    for (size_t i = 0; i < range.opt.size(); ++i) {
      if (range.min[i] > range.opt[i] || range.opt[i] > range.max[i]) {
        *error = "input \"" + name + "\"" + where + ": dimension " + std::to_string(i) +
                 " needs min <= opt <= max (got " + FormatShape(range.min) + ", " + FormatShape(range.opt) + ", " +
                 FormatShape(range.max) + ")";
        return false;
      }
    }
    out->push_back(std::move(range));
  }
  return true;
}

}  // namespace

namespace {

// --fp16 and the other precisions, or --stronglyTyped.
std::string ResolvePrecision(const RawBuildFlags& raw, BuildOptions& o) {
  o.fp16 = raw.fp16;
  o.bf16 = raw.bf16;
  o.int8 = raw.int8;
  o.fp8 = raw.fp8;
  o.int4 = raw.int4;
  o.best = raw.best;
  o.strongly_typed = raw.strongly_typed;
  o.no_tf32 = raw.no_tf32;
  if (o.strongly_typed && (o.fp16 || o.bf16 || o.int8 || o.fp8 || o.int4 || o.best)) {
    return "--stronglyTyped takes the types from the model; drop --fp16/--bf16/--int8/--fp8/--int4/--best, or drop "
           "--stronglyTyped";
  }
  return "";
}

// --memPoolSize (trtexec's POOL:SIZE list) and --workspace.
std::string ResolveMemoryPools(const RawBuildFlags& raw, BuildOptions& o) {
  // trtexec takes "workspace:1G,dlaSRAM:1M" as well as repeated options.
  std::vector<std::string> pools;
  for (const std::string& entry : raw.mem_pool_size) {
    size_t begin = 0;
    while (true) {
      const size_t comma = entry.find(',', begin);
      pools.push_back(entry.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin));
      if (comma == std::string::npos) break;
      begin = comma + 1;
    }
  }
  const std::pair<const char*, std::optional<uint64_t>*> pool_names[] = {
      {"workspace", &o.workspace_bytes},
      {"dlaSRAM", &o.dla_sram_bytes},
      {"dlaLocalDRAM", &o.dla_local_dram_bytes},
      {"dlaGlobalDRAM", &o.dla_global_dram_bytes},
      {"tacticSharedMem", &o.tactic_shared_memory_bytes}};
  for (const std::string& pool : pools) {
    const size_t colon = pool.find(':');
    const std::string name = colon == std::string::npos ? "" : pool.substr(0, colon);
    std::optional<uint64_t>* target = nullptr;
    for (const auto& [known, field] : pool_names) {
      if (name == known) target = field;
    }
    if (target == nullptr) {
      return "--memPoolSize: \"" + pool +
             "\": expected POOL:SIZE with POOL one of workspace, dlaSRAM, dlaLocalDRAM, dlaGlobalDRAM, "
             "tacticSharedMem (e.g. --memPoolSize=workspace:4G)";
    }
    if (*target) {
      return "--memPoolSize: the " + name + " size is given twice";
    }
    const MemorySize size = ParseMemorySize(pool.substr(colon + 1), "--memPoolSize");
    if (!size.bytes) {
      return size.error;
    }
    *target = *size.bytes;
  }
  if (!raw.workspace.empty()) {
    if (o.workspace_bytes) {
      return "give the workspace size once: --memPoolSize=workspace:N or --workspace=N, not both";
    }
    const MemorySize size = ParseMemorySize(raw.workspace, "--workspace");
    if (!size.bytes) {
      return size.error;
    }
    o.workspace_bytes = *size.bytes;
  }
  return "";
}

// The numeric options: levels, streams, threads, tactics, DLA core, device.
std::string ResolveLevels(const RawBuildFlags& raw, BuildOptions& o) {
  std::string error;
  if (!ParseInt(raw.builder_optimization_level, "--builderOptimizationLevel", 0, 5, &o.optimization_level, &error) ||
      !ParseInt(raw.max_aux_streams, "--maxAuxStreams", 0, 1024, &o.max_aux_streams, &error) ||
      !ParseInt(raw.max_threads, "--maxThreads", 1, 4096, &o.max_threads, &error) ||
      !ParseInt(raw.max_tactics, "--maxTactics", -1, 1 << 30, &o.max_tactics, &error) ||
      !ParseInt(raw.tiling_optimization_level, "--tilingOptimizationLevel", 0, 3, &o.tiling_optimization_level,
                &error) ||
      !ParseInt(raw.use_dla_core, "--useDLACore", 0, 64, &o.dla_core, &error) ||
      !ParseInt(raw.device, "--device", 0, 1023, &o.device, &error)) {
    return error;
  }
  return "";
}

// --tacticSources=-CUBLAS,+CUDNN (trtexec's syntax: each source with a sign).
std::string ResolveTacticSources(const RawBuildFlags& raw, BuildOptions& o) {
  if (!raw.tactic_sources.empty()) {
    size_t begin = 0;
    while (begin <= raw.tactic_sources.size()) {
      size_t comma = raw.tactic_sources.find(',', begin);
      if (comma == std::string::npos) comma = raw.tactic_sources.size();
      const std::string item = raw.tactic_sources.substr(begin, comma - begin);
      static const char* const kSources[] = {"CUBLAS", "CUBLAS_LT", "CUDNN", "EDGE_MASK_CONVOLUTIONS",
                                             "JIT_CONVOLUTIONS"};
      const bool signed_ok = item.size() > 1 && (item[0] == '+' || item[0] == '-');
      std::string name = signed_ok ? item.substr(1) : item;
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::toupper(c); });
      if (!signed_ok || std::find_if(std::begin(kSources), std::end(kSources),
                                     [&](const char* k) { return name == k; }) == std::end(kSources)) {
        return "--tacticSources: \"" + item +
               "\" should be +SOURCE or -SOURCE with SOURCE one of CUBLAS, CUBLAS_LT, CUDNN, "
               "EDGE_MASK_CONVOLUTIONS, JIT_CONVOLUTIONS (e.g. --tacticSources=-CUBLAS,+CUDNN)";
      }
      o.tactic_sources.push_back({name, item[0] == '+'});
      begin = comma + 1;
    }
  }
  return "";
}

// The options with named values, the on/off flags and the plugins.
std::string ResolveChoicesAndFlags(const RawBuildFlags& raw, BuildOptions& o) {
  std::string error;
  auto one_of = [&](const std::string& value, const char* flag, std::initializer_list<const char*> allowed,
                    std::string* out) {
    if (value.empty()) return true;
    std::string list;
    for (const char* a : allowed) {
      if (value == a) {
        *out = value;
        return true;
      }
      list += std::string(list.empty() ? "" : ", ") + a;
    }
    error = std::string(flag) + ": \"" + value + "\" is not one of " + list;
    return false;
  };
  std::string sparsity;
  if (!one_of(raw.hardware_compatibility_level, "--hardwareCompatibilityLevel",
              {"none", "ampere+", "sameComputeCapability"}, &o.hardware_compatibility_level) ||
      !one_of(raw.profiling_verbosity, "--profilingVerbosity", {"layer_names_only", "detailed", "none"},
              &o.profiling_verbosity) ||
      !one_of(raw.sparsity, "--sparsity", {"disable", "enable"}, &sparsity)) {
    return error;
  }
  o.sparsity = sparsity == "enable";
  o.version_compatible = raw.version_compatible;
  o.exclude_lean_runtime = raw.exclude_lean_runtime;
  if (o.exclude_lean_runtime && !o.version_compatible) {
    return "--excludeLeanRuntime applies to version-compatible engines only: add --versionCompatible";
  }
  o.refit = raw.refit;
  o.strip_weights = raw.strip_weights;
  o.allow_weight_streaming = raw.allow_weight_streaming;
  o.no_compilation_cache = raw.no_compilation_cache;
  o.direct_io = raw.direct_io;
  o.allow_gpu_fallback = raw.allow_gpu_fallback;
  if (o.allow_gpu_fallback && !o.dla_core) {
    return "--allowGPUFallback lets DLA layers fall back to the GPU: it needs --useDLACore=N";
  }
  o.static_plugins = raw.static_plugins;
  o.dynamic_plugins = raw.dynamic_plugins;
  o.plugins_to_serialize = raw.plugins_to_serialize;
  if (!raw.ignored.empty()) {
    std::string list;
    for (const std::string& flag : raw.ignored) list += (list.empty() ? "" : " ") + flag;
    o.notices.push_back("ignored (trtexec's inference options; trtwatch only builds the engine): " + list);
  }
  return "";
}

// Shapes: one optimization profile per --profile (or one from the plain options).
std::string ResolveProfiles(const RawBuildFlags& raw, BuildOptions& o) {
  std::string error;
  std::vector<RawProfile> raw_profiles = raw.profiles;
  if (!raw.min_shapes.empty() || !raw.opt_shapes.empty() || !raw.max_shapes.empty()) {
    if (!raw_profiles.empty()) {
      return "--minShapes/--optShapes/--maxShapes before the first --profile: put every shape list after a "
             "--profile=N, or use no --profile at all";
    }
    raw_profiles.push_back({raw.min_shapes, raw.opt_shapes, raw.max_shapes});
  }
  for (size_t p = 0; p < raw_profiles.size(); ++p) {
    Profile profile;
    if (!ResolveProfile(raw_profiles[p], raw_profiles.size() > 1 ? static_cast<int>(p) : -1, &profile, &o.notices,
                        &error)) {
      return error;
    }
    o.profiles.push_back(std::move(profile));
  }
  return "";
}

// The timing cache's options, and the files that must differ.
std::string ResolveTimingCache(const RawBuildFlags& raw, BuildOptions& o) {
  o.verbose = raw.verbose;
  o.timing_cache = raw.timing_cache;
  o.timing_cache_ignore_mismatch = raw.timing_cache_ignore_mismatch;
  o.timing_cache_strict = raw.timing_cache_strict;
  if (o.timing_cache_strict && o.timing_cache_ignore_mismatch) {
    return "--timing-cache-strict and --timing-cache-ignore-mismatch contradict each other: give one";
  }
  if (o.timing_cache_strict && o.timing_cache.empty()) {
    return "--timing-cache-strict needs --timing-cache FILE";
  }
  o.no_builder_cache = raw.no_builder_cache;
  o.error_on_timing_cache_miss = raw.error_on_timing_cache_miss;
  if (o.timing_cache_ignore_mismatch && o.timing_cache.empty()) {
    return "--timing-cache-ignore-mismatch needs --timing-cache FILE";
  }
  if (o.no_builder_cache && !o.timing_cache.empty()) {
    o.notices.push_back("--noBuilderCache: the timing cache \"" + o.timing_cache +
                        "\" is neither read nor written (as trtexec)");
  }
  if (o.error_on_timing_cache_miss && o.timing_cache.empty()) {
    return "--errorOnTimingCacheMiss needs --timing-cache FILE (a cache to miss)";
  }
  if (!o.timing_cache.empty() && (o.timing_cache == o.output || o.timing_cache == o.model)) {
    return "--timing-cache: \"" + o.timing_cache + "\" is also the model or the engine; give the cache its own file";
  }
  if (o.model == o.output && !o.output.empty()) {
    return "-o: the engine would overwrite the model \"" + o.model + "\"; give the engine another name";
  }
  return "";
}

}  // namespace

bool ResolveBuildOptions(const std::string& model, const std::string& output, const RawBuildFlags& raw,
                         BuildOptions* options, std::string* error) {
  BuildOptions o;
  o.model = model;
  o.output = output;
  if (model.empty()) {
    *error = "nothing to build: give MODEL.onnx -o ENGINE, or --simulate PROFILE (try --simulate small-cnn)";
    return false;
  }
  if (output.empty()) {
    // trtexec without --saveEngine builds and discards the engine (it warms a timing cache).
    o.notices.push_back("no -o/--saveEngine: the engine is built and not saved (as trtexec without --saveEngine)");
  }
  using Step = std::string (*)(const RawBuildFlags&, BuildOptions&);
  for (Step step : {ResolvePrecision, ResolveMemoryPools, ResolveLevels, ResolveTacticSources, ResolveChoicesAndFlags,
                    ResolveProfiles, ResolveTimingCache}) {
    if (std::string problem = step(raw, o); !problem.empty()) {
      *error = std::move(problem);
      return false;
    }
  }
  *options = std::move(o);
  return true;
}

bool CheckBuildPaths(const BuildOptions& options, std::string* error) {
  const PathStatus model = InspectPath(options.model);
  if (model.kind == PathKind::kMissing) {
    *error = "model \"" + options.model + "\": " + model.error +
             (model.not_found ? "; check the path (give an .onnx file)" : "");
    return false;
  }
  if (model.kind == PathKind::kFolder) {
    *error = "model \"" + options.model + "\" is a folder; give the .onnx file inside it";
    return false;
  }
  if (std::string reason; !CanAccess(options.model, Access::kRead, &reason)) {
    *error = "model \"" + options.model + "\" cannot be read (" + reason + "); check its permissions";
    return false;
  }
  if (!options.output.empty() && !CheckOutputFolder(options.output, "engine", "-o", error)) return false;
  for (const auto* list : {&options.static_plugins, &options.dynamic_plugins, &options.plugins_to_serialize}) {
    for (const std::string& plugin : *list) {
      if (std::string reason;
          InspectPath(plugin).kind != PathKind::kFile || !CanAccess(plugin, Access::kRead, &reason)) {
        *error = "plugin library \"" + plugin + "\" is not a readable file; check the path given to "
                 "--staticPlugins/--dynamicPlugins/--setPluginsToSerialize";
        return false;
      }
    }
  }
  if (!options.timing_cache.empty() && options.timing_cache != kAutoTimingCache) {
    if (const PathKind kind = InspectPath(options.timing_cache).kind; kind != PathKind::kMissing && kind != PathKind::kFile) {
      *error = "--timing-cache: \"" + options.timing_cache + "\" is not a regular file; give a file path";
      return false;
    }
    if (!CheckOutputFolder(options.timing_cache, "timing cache", "--timing-cache", error)) return false;
  }
  return true;
}

bool CheckForTensorRtMajor(const BuildOptions& options, int major, std::string* error) {
  return CheckForTensorRtVersion(options, major, 99, error);
}

bool CheckForTensorRtVersion(const BuildOptions& options, int major, int minor, std::string* error) {
  const std::string version = std::to_string(major) + "." + std::to_string(minor);
  if (major < 9) {
    *error = "TensorRT " + std::to_string(major) +
             " has no progress monitor (it came in TensorRT 9.0); install TensorRT 9, 10 or 11";
    return false;
  }
  if (major >= 11 && (options.fp16 || options.bf16 || options.int8 || options.fp8 || options.int4 || options.best)) {
    *error = "TensorRT " + std::to_string(major) +
             " builds strongly typed networks only: the types come from the model. Drop "
             "--fp16/--bf16/--int8/--fp8/--int4/--best and export the model in the precision you want (or quantize "
             "it with Q/DQ nodes)";
    return false;
  }
  // Options whose API came after 9.0, with the version that added it.
  const struct {
    bool asked;
    const char* option;
    int major, minor;
  } needs[] = {
      {options.int4, "--int4", 10, 1},
      {options.strip_weights, "--stripWeights", 10, 0},
      {options.allow_weight_streaming, "--allowWeightStreaming", 10, 0},
      {options.tactic_shared_memory_bytes.has_value(), "--memPoolSize=tacticSharedMem", 10, 0},
      {options.max_tactics.has_value(), "--maxTactics", 10, 4},
      {options.tiling_optimization_level.has_value(), "--tilingOptimizationLevel", 10, 8},
      {options.hardware_compatibility_level == "sameComputeCapability", "--hardwareCompatibilityLevel=sameComputeCapability",
       10, 9},
  };
  for (const auto& need : needs) {
    if (need.asked && (major < need.major || (major == need.major && minor < need.minor))) {
      *error = std::string(need.option) + " needs TensorRT " + std::to_string(need.major) + "." +
               std::to_string(need.minor) + " or newer; this trtwatch was built for TensorRT " + version +
               ": drop the option, or rebuild trtwatch against a newer TensorRT";
      return false;
    }
  }
  if (major >= 11) {
    for (const TacticSourceChange& change : options.tactic_sources) {
      if (change.source == "CUBLAS" || change.source == "CUBLAS_LT" || change.source == "CUDNN") {
        *error = "--tacticSources: TensorRT " + std::to_string(major) + " has no " + change.source +
                 " tactic source (removed in 11.0); only EDGE_MASK_CONVOLUTIONS and JIT_CONVOLUTIONS remain";
        return false;
      }
    }
  }
  return true;
}

std::string FormatTensorRtVersion(int32_t version) {
  if (version <= 0) return "unknown";
  int32_t major, minor, patch;
  if (version >= 100000) {  // 10.x on: major*10000 + minor*100 + patch
    major = version / 10000;
    minor = (version / 100) % 100;
    patch = version % 100;
  } else {  // up to 9.x: major*1000 + minor*100 + patch
    major = version / 1000;
    minor = (version / 100) % 10;
    patch = version % 100;
  }
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

int TensorRtMajorOf(int32_t version) { return version >= 100000 ? version / 10000 : version / 1000; }

std::string FormatShape(const Shape& shape) {
  if (shape.empty()) return "scalar";
  std::string text;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += 'x';
    text += std::to_string(shape[i]);
  }
  return text;
}

}  // namespace trtwatch::trt
