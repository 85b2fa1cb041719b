#include "builds/executors/slurm_job_info.h"

#include <algorithm>
#include <charconv>

#include "protocol/utf8.h"

namespace trtwatch::builds {

namespace {

bool AllOf(std::string_view s, bool (*ok)(char)) { return std::all_of(s.begin(), s.end(), ok); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsStateChar(char c) { return (c >= 'A' && c <= 'Z') || c == '_'; }
// Printable ASCII without spaces: what a reason, a node list or a GPU list is made of.
bool IsPlainChar(char c) { return c > ' ' && c < 0x7f; }

std::string_view TrimLine(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.remove_suffix(1);
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  return s;
}

// The value of the field `key` of a "Key=Value Key=Value" line: nullopt when absent.
std::optional<std::string_view> Field(std::string_view line, std::string_view key) {
  size_t from = 0;
  while (from < line.size()) {
    const size_t at = line.find(key, from);
    if (at == std::string_view::npos) return std::nullopt;
    const size_t after = at + key.size();
    if ((at == 0 || line[at - 1] == ' ') && after < line.size() && line[after] == '=') {
      const size_t end = line.find(' ', after + 1);
      return line.substr(after + 1, end == std::string_view::npos ? std::string_view::npos : end - after - 1);
    }
    from = at + 1;
  }
  return std::nullopt;
}

std::optional<int> SmallNumber(std::string_view text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0 || value > 255) return std::nullopt;
  return value;
}

std::string Quoted(std::string_view text) { return "\"" + ValidBoundedText(text, 200) + "\""; }

}  // namespace

bool IsSlurmJobId(std::string_view id) { return !id.empty() && id.size() <= 20 && AllOf(id, IsDigit); }

JobIdResult ParseSbatchJobId(std::string_view output) {
  std::string_view line = TrimLine(output.substr(0, std::min(output.size(), kMaxSlurmOutput)));
  const std::string_view id = line.substr(0, line.find(';'));
  if (line.find('\n') != std::string_view::npos || !IsSlurmJobId(id)) {
    return {"", "sbatch --parsable printed " + Quoted(line) + ", not a job id"};
  }
  return {std::string(id), ""};
}

bool IsFinalSlurmState(std::string_view state) {
  return state != "PENDING" && state != "RUNNING" && state != "CONFIGURING" && state != "COMPLETING" &&
         state != "SUSPENDED" && state != "REQUEUED" && state != "REQUEUE_HOLD" && state != "REQUEUE_FED" &&
         state != "RESIZING" && state != "SIGNALING" && state != "STAGE_OUT" && state != "STOPPED";
}

JobInfoResult ParseScontrolJob(std::string_view output, std::string_view job_id) {
  const std::string_view line = TrimLine(output.substr(0, std::min(output.size(), kMaxSlurmOutput)));
  if (line.find("Invalid job id") != std::string_view::npos) return {std::nullopt, true, ""};
  const std::optional<std::string_view> id = Field(line, "JobId");
  const std::optional<std::string_view> state = Field(line, "JobState");
  if (!id || *id != job_id || !state || state->empty() || state->size() > 32 || !AllOf(*state, IsStateChar)) {
    return {std::nullopt, false, "scontrol show job " + std::string(job_id) + " printed " + Quoted(line) +
                                     ", not that job's state"};
  }
  SlurmJobInfo info;
  info.state = std::string(*state);
  auto plain = [&](std::string_view key) {
    const std::optional<std::string_view> v = Field(line, key);
    if (!v || *v == "(null)" || v->size() > kMaxSlurmField || !AllOf(*v, IsPlainChar)) return std::string();
    return std::string(*v);
  };
  // Slurm's reason "None" says it has not set one yet (squeue(1), JOB REASON CODES): no reason.
  info.reason = plain("Reason") == "None" ? std::string() : plain("Reason");
  info.node = plain("NodeList");
  if (const std::optional<std::string_view> exit = Field(line, "ExitCode")) {
    const size_t colon = exit->find(':');
    if (colon != std::string_view::npos) {
      info.exit_code = SmallNumber(exit->substr(0, colon));
      info.exit_signal = SmallNumber(exit->substr(colon + 1));
    }
  }
  return {info, false, ""};
}

std::optional<JobStartFacts> ParseJobStartFacts(std::string_view text) {
  if (text.size() > kMaxSlurmOutput || text.empty() || text.back() != '\n') return std::nullopt;  // not all written yet
  JobStartFacts facts;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl + 1);
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    const std::string_view value = line.substr(eq + 1);
    if (value.size() > kMaxSlurmField || !AllOf(value, IsPlainChar)) return std::nullopt;
    const std::string_view key = line.substr(0, eq);
    if (key == "node") facts.node = value;
    if (key == "cuda_visible_devices") facts.cuda_visible_devices = value;
    if (key == "slurm_job_gpus") facts.slurm_job_gpus = value;
  }
  return facts;
}

}  // namespace trtwatch::builds
