#include "backends/timing_cache_use.h"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <system_error>

#include "platform/atomic_file.h"
#include "platform/sha256.h"
#include "platform/utf8_edges.h"
#include "protocol/utf8.h"

namespace trtwatch {

namespace {

using nlohmann::json;

constexpr char kFormat[] = "trtwatch-timing-cache-use";
constexpr size_t kMaxUseFile = 4096;  // a few counts and two names
constexpr size_t kMaxName = 200;

int64_t CountOf(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return 0;
  const int64_t n = it->get<int64_t>();
  return n > 0 ? n : 0;
}

std::string NameOf(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return "";
  std::string name = it->get<std::string>();
  return name.size() <= kMaxName ? ValidUtf8(name) : "";
}

std::string Bounded(std::string_view name) { return ValidUtf8(name.substr(0, kMaxName)); }

std::optional<CacheVersion> VersionOf(const json& j) {
  const auto it = j.find("version_written");
  if (it == j.end() || !it->is_object()) return std::nullopt;
  const auto sha = it->find("sha256");
  const auto size = it->find("size");
  const auto modified = it->find("modified");
  if (sha == it->end() || !sha->is_string() || !DigestFromHex(sha->get<std::string>())) return std::nullopt;
  if (size == it->end() || !size->is_number_unsigned() || modified == it->end() || !modified->is_number_integer()) {
    return std::nullopt;
  }
  return CacheVersion{sha->get<std::string>(), size->get<uint64_t>(), modified->get<int64_t>()};
}

json VersionJson(const std::optional<CacheVersion>& v) {
  if (!v) return nullptr;
  return {{"sha256", v->sha256}, {"size", v->size}, {"modified", v->modified}};
}

}  // namespace

std::string TimingCacheUseFile(const std::string& cache_file) { return cache_file + ".use"; }

std::optional<CacheVersion> FileVersion(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path file = Utf8Path(path);
  const uint64_t size = std::filesystem::file_size(file, ec);
  if (ec) return std::nullopt;
  const auto modified = std::filesystem::last_write_time(file, ec);
  if (ec) return std::nullopt;
  return CacheVersion{"", size, static_cast<int64_t>(modified.time_since_epoch().count())};
}

TimingCacheUse ReadTimingCacheUse(const std::string& cache_file) {
  std::string text;
  std::string error;
  if (!ReadWholeFile(TimingCacheUseFile(cache_file), &text, &error) || text.size() > kMaxUseFile) return {};
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return {};
  const auto format = j.find("format");
  if (format == j.end() || *format != kFormat) return {};
  return {NameOf(j, "builder"), NameOf(j, "gpu"), CountOf(j, "served"), CountOf(j, "contributed"), VersionOf(j)};
}

std::string RecordTimingCacheUse(const std::string& cache_file, std::string_view builder, std::string_view gpu,
                                 CacheUseEvent event, std::string_view written) {
  TimingCacheUse use = ReadTimingCacheUse(cache_file);
  use.builder = Bounded(builder);
  use.gpu = Bounded(gpu);
  ++(event == CacheUseEvent::kServed ? use.served : use.contributed);
  if (event == CacheUseEvent::kContributed) {
    use.version = FileVersion(cache_file);
    if (use.version) use.version->sha256 = HexOf(Sha256Of(written));
  }
  const json j = {{"format", kFormat},          {"version", 1},
                  {"builder", use.builder},     {"gpu", use.gpu},
                  {"served", use.served},       {"contributed", use.contributed},
                  {"version_written", VersionJson(use.version)}};
  std::string error;
  if (!WriteFileAtomically(TimingCacheUseFile(cache_file), j.dump() + "\n", &error)) return error;
  return "";
}

}  // namespace trtwatch
