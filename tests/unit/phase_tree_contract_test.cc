// The phase-tree contract (tests/contract/phase_tree/README.md) run by the core's
// PhaseTree: each recorded stream, folded event by event, must give the expected active
// tree and summary. The dashboard, the VS Code extension and the Python module run the
// same files in their own test runners.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/phase_tree.h"
#include "protocol/event_json.h"

namespace trtwatch {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const fs::path kContractDir = fs::path(TRTWATCH_CONTRACT_DIR) / "phase_tree";

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> CaseNames() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(kContractDir)) {
    if (entry.path().extension() == ".jsonl") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// The tree as the contract writes it: the active phases depth-first, and the summary.
json Projection(const TreeSnapshot& tree) {
  json active = json::array();
  for (const PhaseNode& node : tree.active) {
    active.push_back({{"id", node.id}, {"name", node.name}, {"depth", node.depth}, {"total", node.total},
                      {"done", node.done}});
  }
  const json status = tree.finished ? json(std::string(BuildStatusName(tree.status))) : json(nullptr);
  return {{"active", active},
          {"summary", {{"phases_started", tree.phases_started}, {"phases_finished", tree.phases_finished},
                       {"finished", tree.finished}, {"status", status}}}};
}

TEST(PhaseTreeContractTest, EveryStreamGivesItsExpectedTree) {
  const std::vector<std::string> names = CaseNames();
  ASSERT_GE(names.size(), 9u) << "no contract streams in " << kContractDir;
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    PhaseTree tree;
    std::istringstream lines(ReadFile(kContractDir / (name + ".jsonl")));
    for (std::string line; std::getline(lines, line);) {
      Event event;
      std::string error;
      ASSERT_TRUE(EventFromJson(line, &event, &error)) << error << ": " << line;
      tree.Apply(event);
    }
    json expected = json::parse(ReadFile(kContractDir / (name + ".json")));
    expected.erase("description");
    EXPECT_EQ(Projection(*tree.Snapshot()), expected);
  }
}

}  // namespace
}  // namespace trtwatch
