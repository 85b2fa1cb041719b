#include "cli/history_command.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include <trtwatch/result.h>

#include "history/build_lookup.h"
#include "history/history_file.h"
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
bool LoadEntries(const HistoryCommandOptions& options, std::vector<HistoryEntry>* entries, std::string* path,
                 std::string* error) {
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
  history::ReadResult read = file.Read();
  for (const std::string& warning : read.warnings) std::fprintf(stderr, "trtwatch: warning: %s\n", warning.c_str());
  const int64_t now = history::UnixNow();
  for (HistoryEntry& entry : read.entries) {
    if (!options.model.empty() && entry.model.find(options.model) == std::string::npos) continue;
    if (since > 0 && static_cast<double>(now - entry.finished_at) > since) continue;
    entries->push_back(std::move(entry));
  }
  return true;
}

json EntryJson(const HistoryEntry& entry) {
  json families = json::array();
  for (const history::FamilyTime& f : entry.families) {
    families.push_back({{"family", f.family}, {"count", f.count}, {"seconds", f.seconds}, {"self", f.self_seconds}});
  }
  return {{"build", entry.build},   {"key", entry.key},           {"model", entry.model},
          {"backend", entry.backend}, {"finished_at", entry.finished_at}, {"elapsed", entry.elapsed},
          {"status", BuildStatusName(entry.status)}, {"error", entry.error}, {"families", families}};
}

void Print(const json& j) { std::printf("%s\n", j.dump(2, ' ', false, json::error_handler_t::replace).c_str()); }

int RunList(const HistoryCommandOptions& options) {
  std::vector<HistoryEntry> entries;
  std::string path;
  std::string error;
  if (!LoadEntries(options, &entries, &path, &error)) return UsageError("history", error);
  if (options.json) {
    json list = json::array();
    for (const HistoryEntry& entry : entries) list.push_back(EntryJson(entry));
    Print(list);
    return exit_code::kSucceeded;
  }
  if (entries.empty()) {
    std::printf("no builds in %s\n", path.c_str());
    return exit_code::kSucceeded;
  }
  std::printf("%-34s  %-19s  %-10s  %9s  %-12s  %s\n", "BUILD", "FINISHED (UTC)", "STATUS", "ELAPSED", "KEY", "MODEL");
  for (const HistoryEntry& entry : entries) {
    std::printf("%-34s  %-19s  %-10s  %9s  %-12s  %s\n", entry.build.c_str(), UtcTime(entry.finished_at).c_str(),
                std::string(BuildStatusName(entry.status)).c_str(), Seconds(entry.elapsed).c_str(),
                entry.key.substr(0, 12).c_str(), entry.model.c_str());
  }
  return exit_code::kSucceeded;
}

json ReportJson(const history::KeyReport& report) {
  const auto durations = [](const history::Durations& d) {
    return json{{"count", d.count}, {"median", d.median}, {"p90", d.p90}};
  };
  json families = json::array();
  for (const history::FamilyReport& f : report.families) {
    families.push_back({{"family", f.family}, {"seconds", durations(f.total)}, {"self_share", f.self_share}});
  }
  json regressions = json::array();
  for (const history::Regression& r : report.regressions) {
    regressions.push_back({{"build", r.build}, {"elapsed", r.elapsed}, {"median_before", r.median_before}});
  }
  return {{"key", report.key},
          {"model", report.model},
          {"backend", report.backend},
          {"builds", report.builds},
          {"succeeded", report.succeeded},
          {"elapsed", durations(report.elapsed)},
          {"trend", report.trend ? json(*report.trend) : json(nullptr)},
          {"families", families},
          {"regressions", regressions}};
}

void PrintReport(const history::KeyReport& report) {
  std::printf("%s  key %s  %zu builds (%zu succeeded)\n", report.model.c_str(), report.key.substr(0, 12).c_str(),
              report.builds, report.succeeded);
  if (report.succeeded == 0) return;
  std::string trend = "trend: fewer than 6 successful builds";
  if (report.trend) {
    char text[96];
    std::snprintf(text, sizeof text, "trend %+.0f %% (the newest third against the oldest)", *report.trend * 100);
    trend = text;
  }
  std::printf("  elapsed: median %s, p90 %s, %s\n", Seconds(report.elapsed.median).c_str(),
              Seconds(report.elapsed.p90).c_str(), trend.c_str());
  std::printf("  phases (median, p90, share of a build in their own time):\n");
  constexpr size_t kShown = 8;
  for (size_t i = 0; i < report.families.size() && i < kShown; ++i) {
    const history::FamilyReport& f = report.families[i];
    std::printf("    %-44.44s %9s %9s %4.0f %%\n", f.family.c_str(), Seconds(f.total.median).c_str(),
                Seconds(f.total.p90).c_str(), f.self_share * 100);
  }
  for (const history::Regression& r : report.regressions) {
    std::printf("  regressed: %s took %s, %+.0f %% on the median of the builds before it (%s)\n", r.build.c_str(),
                Seconds(r.elapsed).c_str(), (r.elapsed / r.median_before - 1) * 100, Seconds(r.median_before).c_str());
  }
}

int RunReport(const HistoryCommandOptions& options) {
  std::vector<HistoryEntry> entries;
  std::string path;
  std::string error;
  if (!LoadEntries(options, &entries, &path, &error)) return UsageError("report", error);
  const std::vector<history::KeyReport> reports = history::Report(entries);
  if (options.json) {
    json list = json::array();
    for (const history::KeyReport& report : reports) list.push_back(ReportJson(report));
    Print(list);
    return exit_code::kSucceeded;
  }
  if (reports.empty()) std::printf("no builds in %s\n", path.c_str());
  for (const history::KeyReport& report : reports) PrintReport(report);
  return exit_code::kSucceeded;
}

int RunCompare(const HistoryCommandOptions& options) {
  if (options.builds.empty() || options.builds.size() > 2) {
    return UsageError("compare", "give two builds (A B), or one to compare with its key's median");
  }
  HistoryCommandOptions all = options;  // compare looks builds up by id, unfiltered
  all.model.clear();
  all.since.clear();
  std::vector<HistoryEntry> entries;
  std::string path;
  std::string error;
  if (!LoadEntries(all, &entries, &path, &error)) return UsageError("compare", error);
  const history::FoundBuild found_after = history::FindBuild(entries, options.builds.back(), path);
  if (found_after.entry == nullptr) return UsageError("compare", found_after.error);
  const HistoryEntry* after = found_after.entry;
  std::optional<HistoryEntry> before;
  std::string before_label;
  if (options.builds.size() == 2) {
    const history::FoundBuild found_first = history::FindBuild(entries, options.builds.front(), path);
    if (found_first.entry == nullptr) return UsageError("compare", found_first.error);
    const HistoryEntry* first = found_first.entry;
    before = *first;
    before_label = first->build;
  } else {
    std::vector<const HistoryEntry*> others;
    for (const HistoryEntry& entry : entries) {
      if (entry.key == after->key && entry.build != after->build && entry.status == BuildStatus::kSucceeded) {
        others.push_back(&entry);
      }
    }
    before = history::MedianEntry(others);
    if (!before) return UsageError("compare", "no other successful build of " + after->build + "'s key to compare with");
    before_label = "the median of " + std::to_string(others.size()) + " builds";
  }
  const history::Comparison comparison = history::Compare(*before, before_label, *after, after->build);
  if (options.json) {
    json families = json::array();
    for (const history::FamilyDelta& f : comparison.families) {
      families.push_back({{"family", f.family}, {"before", f.before}, {"after", f.after}});
    }
    Print({{"before", comparison.before_label},
           {"after", comparison.after_label},
           {"before_elapsed", comparison.before_elapsed},
           {"after_elapsed", comparison.after_elapsed},
           {"families", families},
           {"verdict", comparison.verdict}});
    return exit_code::kSucceeded;
  }
  std::printf("%-44s %10s %10s %10s\n", "PHASE (own time)", "BEFORE", "AFTER", "CHANGE");
  for (const history::FamilyDelta& f : comparison.families) {
    const double change = f.after - f.before;
    std::printf("%-44.44s %10s %10s %9s%s\n", f.family.c_str(), Seconds(f.before).c_str(), Seconds(f.after).c_str(),
                Seconds(std::fabs(change)).c_str(), change > 0.05 ? "+" : change < -0.05 ? "-" : " ");
  }
  std::printf("%s\n", comparison.verdict.c_str());
  return exit_code::kSucceeded;
}

void AddFilters(CLI::App* command, HistoryCommandOptions* options) {
  command->add_option("--history", options->history, "The history folder (default: TRTWATCH_HISTORY, the state folder)");
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
  commands.compare_cmd->add_option("--history", commands.compare->history, "The history folder");
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
