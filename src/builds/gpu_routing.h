// GPU routing: what a build asks of its GPU, and the service's table of GPU types that
// says how to get one. An engine runs only on the GPU architecture it was built for, so
// a team asks for the GPU it ships to: "gpu": {"type": "h200"} or
// {"compute_capability": "9.0"}. The table (`serve --gpu-type NAME=SLURM_SPEC`, repeated,
// or `--gpu-types FILE`) maps each name to a Slurm GRES type or node feature, and
// optionally to its compute capability; the local executor meets a need with a GPU of
// its own host (docs/slurm.md, "Routing by GPU").
//
// Threading: values and pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "platform/cuda_driver.h"  // CudaDevice

namespace trtwatch::builds {

// What one build asks of its GPU: a type of the table, or a compute capability; neither
// when it does not say.
struct GpuNeed {
  std::string type;                // lower case: "h200"
  std::string compute_capability;  // "9.0"
  bool empty() const { return type.empty() && compute_capability.empty(); }
  // "GPU type h200", "compute capability 9.0".
  std::string Describe() const;
};

struct GpuNeedResult {
  std::optional<GpuNeed> need;  // empty when refused
  std::string error;            // then: the rule, with an example
};
// The request's "gpu" value: an object with exactly one of "type" (a name: letters,
// digits, '.', '_', '-', at most 32) or "compute_capability" ("MAJOR.MINOR").
GpuNeedResult ParseGpuNeed(const nlohmann::json& value);
// The need as the normalised request keeps it: {"type": "h200"}.
nlohmann::json GpuNeedJson(const GpuNeed& need);

// A named kind of GPU and how Slurm gives one: a GRES type (--gres=gpu:TYPE:1) or a node
// feature (--constraint=FEATURE with --gres=gpu:1).
struct GpuType {
  std::string name;                // "h200", lower case
  std::string gres;                // Slurm's GRES type; or
  std::string feature;             // a node feature
  std::string compute_capability;  // "9.0"; empty when not said
};

class GpuTable;
struct GpuTableResult;

// The first type that meets a need, or why none does (naming what the table has).
struct GpuRoute {
  std::optional<GpuType> type;
  std::string error;
};

class GpuTable {
 public:
  // From `--gpu-type` flags ("h200=gres:h200", "l4=feature:l4,cc=8.9") and the text of a
  // `--gpu-types` JSON file ({"h200": {"gres": "h200", "compute_capability": "9.0"}}),
  // either or both; refused with the entry and the rule when one is wrong or named twice.
  static GpuTableResult Parse(const std::vector<std::string>& flags, std::string_view json_file_text);

  bool empty() const { return types_.empty(); }
  const std::vector<GpuType>& types() const { return types_; }
  // The type a need names, or the first with its compute capability.
  GpuRoute Route(const GpuNeed& need) const;
  // "h200 (9.0), a100 (8.0), l4": for messages.
  std::string Names() const;

 private:
  std::string Add(GpuType type);  // empty, or why it cannot be added

  std::vector<GpuType> types_;
};

struct GpuTableResult {
  GpuTable table;
  std::string error;  // empty when parsed
};

// sbatch options asking for one GPU of `type`.
std::vector<std::string> SlurmGpuArguments(const GpuType& type);

// The device of this host that meets a need (CUDA's ordinal), or why none does (naming
// the host's GPUs). A type is met by its table entry's compute capability when it has
// one, else by a word of the device's name ("h200" in "NVIDIA H200").
struct LocalGpuRoute {
  std::optional<int> ordinal;
  std::string error;
};
// Whether one device of this host meets a need (as RouteToLocalGpu judges it).
bool LocalGpuMeets(const GpuNeed& need, const GpuTable& table, const CudaDevice& device);
LocalGpuRoute RouteToLocalGpu(const GpuNeed& need, const GpuTable& table, const std::vector<CudaDevice>& devices);

}  // namespace trtwatch::builds
