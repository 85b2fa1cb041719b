#include "builds/build_record.h"

#include <time.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace trtwatch::builds {

namespace {

using nlohmann::json;

constexpr std::string_view kStateNames[] = {"queued", "running", "cancelling", "succeeded",
                                            "failed", "cancelled", "timed_out", "interrupted"};

json Time(double t) { return t > 0 ? json(FormatTime(t)) : json(nullptr); }

double ParseTime(const json& j) {
  if (!j.is_string()) return 0;
  struct tm tm {};
  int ms = 0;
  if (std::sscanf(j.get<std::string>().c_str(), "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms) != 7) {
    return 0;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<double>(timegm(&tm)) + ms / 1000.0;
}

json ParseOr(const std::string& text, json fallback) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? fallback : j;
}

// A stored artifact of a build: {"path", "size", "sha256", "url"} (sha256 null until known).
json ArtifactJson(const std::string& path, uint64_t size, const std::string& sha256, const std::string& url) {
  return {{"path", path}, {"size", size}, {"sha256", sha256.empty() ? json(nullptr) : json(sha256)}, {"url", url}};
}

// Reads ArtifactJson back; a bare path string is the form records had before engines
// were downloadable.
void ArtifactFromJson(const json& j, std::string* path, uint64_t* size, std::string* sha256) {
  if (j.is_string()) *path = j.get<std::string>();
  if (!j.is_object()) return;
  if (j.contains("path") && j["path"].is_string()) *path = j["path"].get<std::string>();
  if (size && j.contains("size") && j["size"].is_number_unsigned()) *size = j["size"].get<uint64_t>();
  if (j.contains("sha256") && j["sha256"].is_string()) *sha256 = j["sha256"].get<std::string>();
}

json Nullable(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

json JobJson(const JobPlace& p) {
  if (p.executor.empty()) return nullptr;
  return {{"executor", p.executor},
          {"id", Nullable(p.id)},
          {"state", Nullable(p.state)},
          {"pending_reason", Nullable(p.pending_reason)},
          {"node", Nullable(p.node)},
          {"gpu", {{"cuda_visible_devices", Nullable(p.cuda_visible_devices)},
                   {"slurm_job_gpus", Nullable(p.slurm_job_gpus)},
                   {"pci_bus_id", Nullable(p.gpu_pci_bus_id)}}},
          {"stream", Nullable(p.stream)}};
}

void JobFromJson(const json& j, JobPlace* p) {
  if (!j.is_object()) return;
  auto str = [](const json& o, const char* key) {
    return o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : std::string();
  };
  p->executor = str(j, "executor");
  p->id = str(j, "id");
  p->state = str(j, "state");
  p->pending_reason = str(j, "pending_reason");
  p->node = str(j, "node");
  p->stream = str(j, "stream");
  if (j.contains("gpu") && j["gpu"].is_object()) {
    p->cuda_visible_devices = str(j["gpu"], "cuda_visible_devices");
    p->slurm_job_gpus = str(j["gpu"], "slurm_job_gpus");
    p->gpu_pci_bus_id = str(j["gpu"], "pci_bus_id");
  }
}

}  // namespace

std::string_view BuildStateName(BuildState state) { return kStateNames[static_cast<size_t>(state)]; }

bool ParseBuildState(std::string_view name, BuildState* state) {
  for (size_t i = 0; i < std::size(kStateNames); ++i) {
    if (kStateNames[i] == name) {
      *state = static_cast<BuildState>(i);
      return true;
    }
  }
  return false;
}

std::string FormatTime(double unix_seconds) {
  const time_t whole = static_cast<time_t>(std::floor(unix_seconds));
  int ms = static_cast<int>(std::lround((unix_seconds - static_cast<double>(whole)) * 1000));
  if (ms > 999) ms = 999;
  struct tm tm {};
  gmtime_r(&whole, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
  return buf;
}

std::string RecordToJson(const BuildRecord& r) {
  json j;
  j["id"] = r.id;
  j["status"] = BuildStateName(r.state);
  j["url"] = "/builds/" + r.id;
  j["events_url"] = "/builds/" + r.id + "/events";
  j["backend"] = r.backend;
  j["request"] = ParseOr(r.request_json, json::object());
  j["model"] = r.model.empty() ? json(nullptr) : json(r.model);
  j["created_at"] = Time(r.created_at);
  j["started_at"] = Time(r.started_at);
  j["finished_at"] = Time(r.finished_at);
  if (r.cancel_reason.empty()) {
    j["cancel"] = nullptr;
  } else {
    j["cancel"] = {{"reason", r.cancel_reason},
                   {"message", r.cancel_message},
                   {"requested_at", Time(r.cancel_requested_at)},
                   {"grace_seconds", r.cancel_grace},
                   {"stop", r.cancel_stop.empty() ? json(nullptr) : json(r.cancel_stop)},
                   {"latency", ParseOr(r.cancel_latency_json, nullptr)}};
  }
  j["phase"] = ParseOr(r.phase_json, nullptr);
  j["estimate"] = ParseOr(r.estimate_json, nullptr);
  j["history_key"] = r.history_key.empty() ? json(nullptr) : json(r.history_key);
  j["events"] = r.last_seq;
  j["error"] = r.error.empty() ? json(nullptr) : json(r.error);
  j["engine"] = r.engine.empty() ? json(nullptr)
                                 : ArtifactJson(r.engine, r.engine_bytes.value_or(0), r.engine_sha256,
                                                "/builds/" + r.id + "/engine");
  j["engine_bytes"] = r.engine_bytes ? json(*r.engine_bytes) : json(nullptr);
  j["timing_cache"] = r.timing_cache.empty() ? json(nullptr)
                                             : ArtifactJson(r.timing_cache, r.timing_cache_bytes,
                                                            r.timing_cache_sha256, "/builds/" + r.id + "/timing-cache");
  j["fleet_timing_cache"] = r.fleet_timing_cache.empty()
                                ? json(nullptr)
                                : json{{"name", r.fleet_timing_cache}, {"url", "/timing-caches/" + r.fleet_timing_cache}};
  j["cache"] = RecordCacheJson(r.cache);
  j["worker_pid"] = r.worker_pid > 0 ? json(r.worker_pid) : json(nullptr);
  j["job"] = JobJson(r.job);
  j["reason"] = r.end_reason.empty() ? json(nullptr) : json(r.end_reason);
  j["exit_code"] = r.exit_code ? json(*r.exit_code) : json(nullptr);
  j["exit_signal"] = r.exit_signal ? json(*r.exit_signal) : json(nullptr);
  j["group"] = r.group ? json{{"id", r.group->id}, {"target", r.group->target}} : json(nullptr);
  j["submitted_by"] = r.submitted_by.empty() ? json(nullptr) : json(r.submitted_by);
  j["cancelled_by"] = r.cancelled_by.empty() ? json(nullptr) : json(r.cancelled_by);
  // Every string was made valid UTF-8 on its way in; replace rather than throw regardless.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

bool RecordFromJson(std::string_view text, BuildRecord* r) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("id") || !j["id"].is_string() || !j.contains("status") ||
      !j["status"].is_string() || !ParseBuildState(j["status"].get<std::string>(), &r->state)) {
    return false;
  }
  auto str = [&](const char* key) {
    return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
  };
  r->id = str("id");
  r->backend = str("backend");
  r->request_json = j.contains("request") ? j["request"].dump() : "{}";
  r->model = str("model");
  r->created_at = ParseTime(j.value("created_at", json()));
  r->started_at = ParseTime(j.value("started_at", json()));
  r->finished_at = ParseTime(j.value("finished_at", json()));
  if (j.contains("cancel") && j["cancel"].is_object()) {
    const json& c = j["cancel"];
    r->cancel_reason = c.value("reason", "");
    r->cancel_message = c.value("message", "");
    r->cancel_requested_at = ParseTime(c.value("requested_at", json()));
    if (c.contains("grace_seconds") && c["grace_seconds"].is_number()) r->cancel_grace = c["grace_seconds"].get<double>();
    if (c.contains("stop") && c["stop"].is_string()) r->cancel_stop = c["stop"].get<std::string>();
    r->cancel_latency_json = c.value("latency", json()).dump();
  }
  r->phase_json = j.value("phase", json()).dump();
  r->estimate_json = j.contains("estimate") && j["estimate"].is_object() ? j["estimate"].dump() : "null";
  r->history_key = IsKeyDigest(str("history_key")) ? str("history_key") : "";  // a damaged one reads as none
  r->last_seq = j.value("events", uint64_t{0});
  r->error = str("error");
  ArtifactFromJson(j.value("engine", json()), &r->engine, nullptr, &r->engine_sha256);
  if (j.contains("engine_bytes") && j["engine_bytes"].is_number_unsigned()) {
    r->engine_bytes = j["engine_bytes"].get<uint64_t>();
  }
  ArtifactFromJson(j.value("timing_cache", json()), &r->timing_cache, &r->timing_cache_bytes, &r->timing_cache_sha256);
  if (const auto fleet = j.find("fleet_timing_cache"); fleet != j.end() && fleet->is_object()) {
    const auto name = fleet->find("name");
    if (name != fleet->end() && name->is_string()) r->fleet_timing_cache = name->get<std::string>();
  }
  r->cache = RecordCacheFromJson(j.value("cache", json())).cache;  // a damaged one reads as none
  if (j.contains("worker_pid") && j["worker_pid"].is_number_integer()) r->worker_pid = j["worker_pid"].get<int>();
  JobFromJson(j.value("job", json()), &r->job);
  r->end_reason = str("reason");
  if (j.contains("exit_code") && j["exit_code"].is_number_integer()) r->exit_code = j["exit_code"].get<int>();
  if (j.contains("exit_signal") && j["exit_signal"].is_number_integer()) r->exit_signal = j["exit_signal"].get<int>();
  if (j.contains("group") && j["group"].is_object() && j["group"].contains("id") && j["group"]["id"].is_string() &&
      j["group"].contains("target") && j["group"]["target"].is_string()) {
    r->group = GroupTag{j["group"]["id"].get<std::string>(), j["group"]["target"].get<std::string>()};
  }
  r->submitted_by = str("submitted_by");  // absent or null in records made before users
  r->cancelled_by = str("cancelled_by");
  return true;
}

std::string EstimateRecordJson(const Estimate& estimate, double t) {
  json remaining = nullptr;
  if (estimate.remaining) {
    remaining = {{"p10", estimate.remaining->p10}, {"p50", estimate.remaining->p50}, {"p90", estimate.remaining->p90}};
  }
  return json{{"remaining", remaining},
              {"based_on", {{"builds", estimate.builds}, {"match", estimate.match}}},
              {"longer_than_history", estimate.longer_than_history},
              {"t", t}}
      .dump();
}

bool IsKeyDigest(std::string_view key) {
  if (key.size() != 64) return false;
  for (const char c : key) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace trtwatch::builds
