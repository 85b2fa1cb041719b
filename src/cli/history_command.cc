#include "cli/history_command.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include <trtwatch/result.h>

#include "app/service_reader.h"
#include "history/build_lookup.h"
#include "history/history_file.h"
#include "history/history_json.h"
#include "history/report.h"
#include "runner/duration.h"
#include "runner/history_folder.h"

namespace trtwatch {

namespace {

using json = nlohmann::json;
using history::HistoryEntry;

int UsageError(const char* command, const std::string& message) {
  std::fprintf(stderr, "trtwatch %s: %s\n", command, message.c_str());
  return exit_code::kUsage;
}

// "2026-12-02 05:39:40" (UTC) from Unix seconds: days to a civil date by the
// proleptic Gregorian calendar's 400-year cycle.
std::string UtcTime(int64_t unix_seconds) {
  const int64_t days = unix_seconds >= 0 ? unix_seconds / 86400 : (unix_seconds - 86399) / 86400;
  const int64_t second_of_day = unix_seconds - days * 86400;
  const int64_t shifted = days + 719468;  // days since 0000-03-01
  const int64_t era = (shifted >= 0 ? shifted : shifted - 146096) / 146097;
  const int64_t day_of_era = shifted - era * 146097;
  const int64_t year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
  const int64_t day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  const int64_t month_index = (5 * day_of_year + 2) / 153;  // March = 0
  const int64_t day = day_of_year - (153 * month_index + 2) / 5 + 1;
  const int64_t month = month_index < 10 ? month_index + 3 : month_index - 9;
  const int64_t year = year_of_era + era * 400 + (month <= 2 ? 1 : 0);
  char text[128];
  std::snprintf(text, sizeof text, "%04lld-%02lld-%02lld %02lld:%02lld:%02lld", static_cast<long long>(year),
                static_cast<long long>(month), static_cast<long long>(day),
                static_cast<long long>(second_of_day / 3600), static_cast<long long>(second_of_day / 60 % 60),
                static_cast<long long>(second_of_day % 60));
  return text;
}

std::string Seconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1fs", seconds);
  return text;
}

// The history's entries the filters keep, oldest first; false (and `*error`) when the
// flags are wrong. Warnings about the file go to stderr.
// `compare` needs whole entries; `report` and `history --json` only their summaries, and
// `history` only the list's fields, which the history's index holds (no JSON parsed).
enum class Detail { kList, kSummaries, kWhole };

bool LoadEntries(const HistoryCommandOptions& options, Detail detail, std::vector<HistoryEntry>* entries,
                 std::string* path, std::string* error) {
  double since = 0;
  if (!options.since.empty() && !ParseDuration(options.since, &since, error)) {
    *error = "--since: " + *error;
    return false;
  }
  const HistoryFolder folder = ChooseHistoryFolder(options.history, false, ProcessEnvironment());
  if (folder.outcome != HistoryFolder::Outcome::kFolder) {
    *error = folder.outcome == HistoryFolder::Outcome::kOff ? "TRTWATCH_HISTORY is off: give --history DIR"
                                                            : folder.error;
    return false;
  }
  const history::HistoryFile file(folder.path, {});
  *path = file.path();
  history::ReadResult read =
      detail == Detail::kWhole ? file.Read()
                               : file.ReadSummaries(detail == Detail::kList ? history::SummaryDetail::kList
                                                                            : history::SummaryDetail::kFamilies);
  for (const std::string& warning : read.warnings) std::fprintf(stderr, "trtwatch: warning: %s\n", warning.c_str());
  const int64_t now = history::UnixNow();
  for (HistoryEntry& entry : read.entries) {
    if (!options.model.empty() && entry.model.find(options.model) == std::string::npos) continue;
    if (since > 0 && static_cast<double>(now - entry.finished_at) > since) continue;
    entries->push_back(std::move(entry));
  }
  return true;
}

void Print(const json& j) { std::printf("%s\n", j.dump(2, ' ', false, json::error_handler_t::replace).c_str()); }

// Fields of a document that may come from a service: absent or mistyped reads as empty.
std::string Text(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}
double Number(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0;
}
const json& Field(const json& j, const char* key) {
  static const json kNull;
  return j.is_object() && j.contains(key) ? j[key] : kNull;
}
const json& Array(const json& j, const char* key) {
  static const json kEmpty = json::array();
  return Field(j, key).is_array() ? Field(j, key) : kEmpty;
}

// ---- the service's history (--service URL) ----

std::string PercentEncoded(const std::string& value) {
  std::string out;
  for (const unsigned char c : value) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      out += hex;
    }
  }
  return out;
}

std::string FilterQuery(const HistoryCommandOptions& options) {
  std::string query;
  if (!options.model.empty()) query += "&model=" + PercentEncoded(options.model);
  if (!options.since.empty()) query += "&since=" + PercentEncoded(options.since);
  if (!query.empty()) query[0] = '?';
  return query;
}

struct Fetched {
  std::optional<json> doc;
  int exit_code = exit_code::kSucceeded;  // no doc: the command's exit code (the error was printed)
};

// GET `target` from the service as a JSON document; an error answer is printed with
// the service's words (400, 404, 409: exit 2, as a local command's unknown id is).
Fetched FetchFromService(const char* command, const HistoryCommandOptions& options, const std::string& target) {
  const app::ServiceAnswer answer = app::GetFromService(options.service, target, options.token_file);
  if (answer.outcome == app::ServiceAnswer::Outcome::kBadOption) return {std::nullopt, UsageError(command, answer.error)};
  if (answer.outcome != app::ServiceAnswer::Outcome::kAnswered) {
    std::fprintf(stderr, "trtwatch %s: %s\n", command, answer.error.c_str());
    return {std::nullopt, exit_code::kFailed};
  }
  json doc = json::parse(answer.body, nullptr, /*allow_exceptions=*/false);
  if (answer.status != 200) {
    const std::string why = Text(doc, "error").empty() ? "HTTP " + std::to_string(answer.status) : Text(doc, "error");
    std::fprintf(stderr, "trtwatch %s: the service answered: %s\n", command, why.c_str());
    return {std::nullopt, answer.status >= 400 && answer.status < 500 ? exit_code::kUsage : exit_code::kFailed};
  }
  if (!doc.is_object()) {
    std::fprintf(stderr, "trtwatch %s: the service's answer is not a JSON object\n", command);
    return {std::nullopt, exit_code::kFailed};
  }
  return {std::move(doc), exit_code::kSucceeded};
}

// ---- printing: the same for the local history and the service's ----

// `builds`: EntryJson documents, oldest first.
void PrintList(const json& builds, const std::string& where) {
  if (builds.empty()) {
    std::printf("no builds in %s\n", where.c_str());
    return;
  }
  std::printf("%-34s  %-19s  %-10s  %9s  %-12s  %s\n", "BUILD", "FINISHED (UTC)", "STATUS", "ELAPSED", "KEY", "MODEL");
  for (const json& entry : builds) {
    std::printf("%-34s  %-19s  %-10s  %9s  %-12s  %s\n", Text(entry, "build").c_str(),
                UtcTime(static_cast<int64_t>(Number(entry, "finished_at"))).c_str(), Text(entry, "status").c_str(),
                Seconds(Number(entry, "elapsed")).c_str(), Text(entry, "key").substr(0, 12).c_str(),
                Text(entry, "model").c_str());
  }
}

// `report`: a ReportJson document.
void PrintReport(const json& report) {
  const size_t builds = static_cast<size_t>(Number(report, "builds"));
  const size_t succeeded = static_cast<size_t>(Number(report, "succeeded"));
  std::printf("%s  key %s  %zu builds (%zu succeeded)\n", Text(report, "model").c_str(),
              Text(report, "key").substr(0, 12).c_str(), builds, succeeded);
  if (succeeded == 0) return;
  std::string trend = "trend: fewer than 6 successful builds";
  if (Field(report, "trend").is_number()) {
    char text[96];
    std::snprintf(text, sizeof text, "trend %+.0f %% (the newest third against the oldest)",
                  Field(report, "trend").get<double>() * 100);
    trend = text;
  }
  const json& elapsed = Field(report, "elapsed");
  std::printf("  elapsed: median %s, p90 %s, %s\n", Seconds(Number(elapsed, "median")).c_str(),
              Seconds(Number(elapsed, "p90")).c_str(), trend.c_str());
  std::printf("  phases (median, p90, share of a build in their own time):\n");
  constexpr size_t kShown = 8;
  const json& families = Array(report, "families");
  for (size_t i = 0; i < families.size() && i < kShown; ++i) {
    const json& f = families[i];
    const json& seconds = Field(f, "seconds");
    std::printf("    %-44.44s %9s %9s %4.0f %%\n", Text(f, "family").c_str(), Seconds(Number(seconds, "median")).c_str(),
                Seconds(Number(seconds, "p90")).c_str(), Number(f, "self_share") * 100);
  }
  for (const json& r : Array(report, "regressions")) {
    const double median_before = Number(r, "median_before");
    std::printf("  regressed: %s took %s, %+.0f %% on the median of the builds before it (%s)\n",
                Text(r, "build").c_str(), Seconds(Number(r, "elapsed")).c_str(),
                median_before > 0 ? (Number(r, "elapsed") / median_before - 1) * 100 : 0.0,
                Seconds(median_before).c_str());
  }
}

// `comparison`: a ComparisonJson document.
void PrintComparison(const json& comparison) {
  std::printf("%-44s %10s %10s %10s\n", "PHASE (own time)", "BEFORE", "AFTER", "CHANGE");
  for (const json& f : Array(comparison, "families")) {
    const double before = Number(f, "before");
    const double after = Number(f, "after");
    const double change = after - before;
    std::printf("%-44.44s %10s %10s %9s%s\n", Text(f, "family").c_str(), Seconds(before).c_str(),
                Seconds(after).c_str(), Seconds(std::fabs(change)).c_str(),
                change > 0.05 ? "+" : change < -0.05 ? "-" : " ");
  }
  std::printf("%s\n", Text(comparison, "verdict").c_str());
}

// ---- the three commands ----

int RunList(const HistoryCommandOptions& options) {
  json builds = json::array();
  std::string where = options.service;
  if (!options.service.empty()) {
    std::string target = "/history" + FilterQuery(options);
    target += (target.find('?') == std::string::npos ? "?" : "&") + std::string("limit=1000");
    Fetched fetched = FetchFromService("history", options, target);
    if (!fetched.doc) return fetched.exit_code;
    const json& newest_first = Array(*fetched.doc, "builds");
    for (auto it = newest_first.rbegin(); it != newest_first.rend(); ++it) builds.push_back(*it);  // oldest first
  } else {
    std::vector<HistoryEntry> entries;
    std::string error;
    const Detail detail = options.json ? Detail::kSummaries : Detail::kList;  // the list shows no phase families
    if (!LoadEntries(options, detail, &entries, &where, &error)) return UsageError("history", error);
    for (const HistoryEntry& entry : entries) builds.push_back(history::EntryJson(entry));
  }
  if (options.json) {
    Print(builds);
  } else {
    PrintList(builds, where);
  }
  return exit_code::kSucceeded;
}

int RunReport(const HistoryCommandOptions& options) {
  json reports = json::array();
  std::string where = options.service;
  if (!options.service.empty()) {
    Fetched fetched = FetchFromService("report", options, "/history/report" + FilterQuery(options));
    if (!fetched.doc) return fetched.exit_code;
    reports = Array(*fetched.doc, "keys");
  } else {
    std::vector<HistoryEntry> entries;
    std::string error;
    if (!LoadEntries(options, Detail::kSummaries, &entries, &where, &error)) return UsageError("report", error);
    for (const history::KeyReport& report : history::Report(entries)) reports.push_back(history::ReportJson(report));
  }
  if (options.json) {
    Print(reports);
    return exit_code::kSucceeded;
  }
  if (reports.empty()) std::printf("no builds in %s\n", where.c_str());
  for (const json& report : reports) PrintReport(report);
  return exit_code::kSucceeded;
}

// The comparison from the local history; unset (and the error printed) when it cannot be made.
std::optional<json> CompareLocally(const HistoryCommandOptions& options, int* code) {
  HistoryCommandOptions all = options;  // compare looks builds up by id, unfiltered
  all.model.clear();
  all.since.clear();
  std::vector<HistoryEntry> entries;
  std::string path;
  std::string error;
  *code = exit_code::kUsage;
  if (!LoadEntries(all, Detail::kWhole, &entries, &path, &error)) return UsageError("compare", error), std::nullopt;
  const history::FoundBuild found_after = history::FindBuild(entries, options.builds.back(), path);
  if (found_after.entry == nullptr) return UsageError("compare", found_after.error), std::nullopt;
  const HistoryEntry* after = found_after.entry;
  if (options.builds.size() == 2) {
    const history::FoundBuild found_first = history::FindBuild(entries, options.builds.front(), path);
    if (found_first.entry == nullptr) return UsageError("compare", found_first.error), std::nullopt;
    return history::ComparisonJson(history::Compare(*found_first.entry, found_first.entry->build, *after, after->build));
  }
  const history::MedianComparison median = history::CompareWithKeyMedian(entries, *after);
  if (!median.comparison) return UsageError("compare", median.error), std::nullopt;
  return history::ComparisonJson(*median.comparison);
}

int RunCompare(const HistoryCommandOptions& options) {
  if (options.builds.empty() || options.builds.size() > 2) {
    return UsageError("compare", "give two builds (A B), or one to compare with its key's median");
  }
  std::optional<json> comparison;
  int code = exit_code::kSucceeded;
  if (!options.service.empty()) {
    std::string target = "/builds/" + PercentEncoded(options.builds.back()) + "/compare";
    if (options.builds.size() == 2) target += "?with=" + PercentEncoded(options.builds.front());
    Fetched fetched = FetchFromService("compare", options, target);
    comparison = std::move(fetched.doc);
    code = fetched.exit_code;
  } else {
    comparison = CompareLocally(options, &code);
  }
  if (!comparison) return code;
  if (options.json) {
    Print(*comparison);
  } else {
    PrintComparison(*comparison);
  }
  return exit_code::kSucceeded;
}

void AddSource(CLI::App* command, HistoryCommandOptions* options) {
  command->add_option("--history", options->history, "The history folder (default: TRTWATCH_HISTORY, the state folder)");
  command->add_option("--service", options->service,
                      "Read the history of the build service at URL (http://HOST:PORT) instead of the local one");
  command->add_option("--token-file", options->token_file, "With --service: the file holding the service's token");
}

void AddFilters(CLI::App* command, HistoryCommandOptions* options) {
  AddSource(command, options);
  command->add_option("--model", options->model, "Only builds whose model contains M");
  command->add_option("--since", options->since, "Only builds that finished within DUR (90m, 2h, 48h)");
  command->add_flag("--json", options->json, "JSON on stdout");
}

}  // namespace

HistoryCommands AddHistoryCommands(CLI::App& app) {
  HistoryCommands commands;
  commands.list_cmd = app.add_subcommand("history", "List the builds in the local build history");
  AddFilters(commands.list_cmd, commands.list.get());
  commands.report_cmd =
      app.add_subcommand("report", "Per build key and phase: durations, trend, dominant phases, regressed builds");
  AddFilters(commands.report_cmd, commands.report.get());
  commands.compare_cmd =
      app.add_subcommand("compare", "Phase by phase, build B against build A (or A against its key's median)");
  commands.compare_cmd->add_option("builds", commands.compare->builds, "Build ids (a unique prefix will do)")
      ->required();
  AddSource(commands.compare_cmd, commands.compare.get());
  commands.compare_cmd->add_flag("--json", commands.compare->json, "JSON on stdout");
  return commands;
}

std::optional<int> RunHistoryCommands(const HistoryCommands& commands) {
  if (commands.list_cmd->parsed()) return RunList(*commands.list);
  if (commands.report_cmd->parsed()) return RunReport(*commands.report);
  if (commands.compare_cmd->parsed()) return RunCompare(*commands.compare);
  return std::nullopt;
}

}  // namespace trtwatch
