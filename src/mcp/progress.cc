#include "mcp/progress.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <vector>

#include "sinks/format.h"

namespace trtwatch::mcp {

namespace {

using nlohmann::json;

struct Node {
  int64_t id = 0;
  int64_t parent = -1;
  std::string name;
  double done = 0;
  double total = 0;
};

std::string Text(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

double Number(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0;
}

std::string StepsText(const Node& n) {
  char buf[64];
  std::snprintf(buf, sizeof buf, " %.0f/%.0f", n.done, n.total);
  return n.name + (n.total > 0 ? buf : "");
}

std::string Seconds(double s) {
  char buf[32];
  if (s < 120) {
    std::snprintf(buf, sizeof buf, "%.0f s", s);
  } else {
    std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  }
  return buf;
}

}  // namespace

std::string EstimateTextOf(const json& record) {
  const json estimate = record.is_object() && record.contains("estimate") ? record["estimate"] : json();
  if (!estimate.is_object() || !estimate.contains("remaining") || !estimate["remaining"].is_object()) return "";
  const json& remaining = estimate["remaining"];
  const json based_on = estimate.contains("based_on") && estimate["based_on"].is_object() ? estimate["based_on"] : json();
  Estimate e;
  e.remaining = Estimate::Remaining{Number(remaining, "p10"), Number(remaining, "p50"), Number(remaining, "p90")};
  e.builds = static_cast<int64_t>(Number(based_on, "builds"));
  e.match = Text(based_on, "match") == "similar" ? "similar" : "exact";
  e.longer_than_history = estimate.contains("longer_than_history") && estimate["longer_than_history"].is_boolean() &&
                          estimate["longer_than_history"].get<bool>();
  return EstimateText(e, 0);
}

Position PositionOf(const json& record) {
  Position pos;
  if (!record.is_object()) return pos;
  const std::string status = Text(record, "status");
  if (status == "queued") {
    pos.where = "queued: waiting for a free build slot";
    return pos;
  }
  const json phase = record.contains("phase") ? record["phase"] : json();
  std::vector<Node> nodes;
  if (phase.is_object() && phase.contains("active") && phase["active"].is_array()) {
    for (const json& a : phase["active"]) {
      if (!a.is_object()) continue;
      Node n;
      if (!a.contains("id") || !a["id"].is_number_integer()) continue;
      n.id = a["id"].get<int64_t>();
      n.parent = a.contains("parent") && a["parent"].is_number_integer() ? a["parent"].get<int64_t>() : -1;
      n.name = Text(a, "phase");
      n.done = Number(a, "done");
      n.total = Number(a, "total");
      nodes.push_back(std::move(n));
    }
  }
  std::map<int64_t, std::vector<const Node*>> children;
  const Node* root = nullptr;
  for (const Node& n : nodes) {
    if (n.parent < 0) {
      if (!root) root = &n;
    } else {
      children[n.parent].push_back(&n);
    }
  }
  if (!root) {
    pos.where = status == "running" || status == "cancelling" ? "starting" : "";
    return pos;
  }
  // Down the chain while exactly one child is active: below a fork, work runs in
  // parallel and no single phase says where the build is.
  std::vector<const Node*> chain = {root};
  while (true) {
    auto it = children.find(chain.back()->id);
    if (it == children.end() || it->second.size() != 1) break;
    chain.push_back(it->second.front());
  }
  double fraction = 0;
  for (size_t i = chain.size(); i-- > 1;) {
    const Node& n = *chain[i];
    fraction = n.total > 0 ? std::min((n.done + fraction) / n.total, 0.999) : 0;
  }
  pos.total = root->total > 0 ? std::optional<double>(root->total) : std::nullopt;
  pos.count = std::min(root->done + fraction, root->total > 0 ? root->total : root->done + fraction);
  pos.where = chain.size() > 1 ? StepsText(*chain.back()) + " \xE2\x80\xBA " + StepsText(*root) : StepsText(*root);
  return pos;
}

std::optional<ProgressReport> ProgressTracker::Next(const json& record, double silent_for) {
  const std::string status = Text(record, "status");
  Position pos = PositionOf(record);
  if (pos.total) total_ = pos.total;
  if (status == "succeeded" || status == "failed" || status == "cancelled" || status == "timed_out" ||
      status == "interrupted") {
    const double count = status == "succeeded" && total_ ? *total_ : std::max(last_, 0.0);
    std::string message = "build " + status;
    const json& error = record.is_object() && record.contains("error") ? record["error"] : json();
    if (status != "succeeded" && error.is_string()) message += ": " + error.get<std::string>();
    return Emit(count, total_, message);
  }
  std::string message = pos.where;
  if (status == "cancelling") {
    message = "cancelling: waiting for TensorRT to finish the current step" +
              (pos.where.empty() || pos.where == "starting" ? std::string() : " (" + pos.where + ")");
  } else if (status == "running" && silent_for >= kSilenceNotice) {
    const int notice = static_cast<int>(silent_for / kSilenceNotice);
    if (notice > silence_notices_) {
      silence_notices_ = notice;
      message = "no progress callback for " + Seconds(std::floor(silent_for)) + ": TensorRT is inside one step (" +
                pos.where + ")";
      return Emit(pos.count, total_, message);
    }
    return std::nullopt;  // the silence was announced; nothing new until it ends or grows
  } else {
    silence_notices_ = 0;
    if (const std::string eta = EstimateTextOf(record); !eta.empty() && !message.empty()) message += "; " + eta;
  }
  if (message.empty()) return std::nullopt;
  if (pos.count <= last_ && message == last_message_) return std::nullopt;
  return Emit(pos.count, total_, message);
}

std::optional<ProgressReport> ProgressTracker::Emit(double count, std::optional<double> total, std::string message) {
  double value = count;
  if (value <= last_) {
    // Nothing more was counted: move by a hundredth of what is left before the next
    // whole step (or the total), which keeps the sequence increasing without claiming work.
    const double ceiling = total && std::floor(last_) + 1 > *total ? *total : std::floor(last_) + 1;
    value = last_ + (ceiling - last_) / 100;
    if (!(value > last_)) return std::nullopt;
  }
  last_ = value;
  last_message_ = message;
  return ProgressReport{value, total, std::move(message)};
}

}  // namespace trtwatch::mcp
