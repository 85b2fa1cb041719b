// `trtwatch history`, `trtwatch report` and `trtwatch compare`: the local build
// history, or a build service's (--service URL, app/service_reader.h), looked back at
// (docs/history.md). The figures are history/report.h's; this is flags, the choice of
// entries, and the text or JSON they are printed as, the same for both.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace trtwatch {

struct HistoryCommandOptions {
  std::string history;  // --history DIR; empty: TRTWATCH_HISTORY, the state folder
  std::string service;     // --service URL: the build service's history instead (docs/api.md)
  std::string token_file;  // --token-file F: the service's bearer token
  std::string model;    // --model M: builds whose model contains M
  std::string since;    // --since DUR: builds that finished within DUR
  bool json = false;
  std::vector<std::string> builds;  // compare: A [B]
};

struct HistoryCommands {
  std::unique_ptr<HistoryCommandOptions> list = std::make_unique<HistoryCommandOptions>();
  std::unique_ptr<HistoryCommandOptions> report = std::make_unique<HistoryCommandOptions>();
  std::unique_ptr<HistoryCommandOptions> compare = std::make_unique<HistoryCommandOptions>();
  CLI::App* list_cmd = nullptr;
  CLI::App* report_cmd = nullptr;
  CLI::App* compare_cmd = nullptr;
};

HistoryCommands AddHistoryCommands(CLI::App& app);

// The exit code of whichever of the three was parsed; unset when none was.
std::optional<int> RunHistoryCommands(const HistoryCommands& commands);

}  // namespace trtwatch
