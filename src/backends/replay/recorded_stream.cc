#include "backends/replay/recorded_stream.h"

#include <fstream>
#include <iterator>
#include <set>
#include <string_view>
#include <system_error>
#include <filesystem>

namespace trtwatch::replay {

namespace {

constexpr std::string_view kWhatItTakes =
    "replay takes one build's stream: a file written by `trtwatch build --events FILE.jsonl`, or "
    "`GET /builds/{id}/events` saved from the service";

// One event's text and the file line it came from.
struct EventLine {
  size_t number = 0;
  std::string_view text;
};

std::string_view WithoutCr(std::string_view line) {
  return !line.empty() && line.back() == '\r' ? line.substr(0, line.size() - 1) : line;
}

std::vector<std::string_view> SplitLines(std::string_view bytes) {
  std::vector<std::string_view> lines;
  for (size_t start = 0; start < bytes.size();) {
    const size_t end = std::min(bytes.find('\n', start), bytes.size());
    lines.push_back(WithoutCr(bytes.substr(start, end - start)));
    start = end + 1;
  }
  return lines;
}

// Server-Sent Events carry each event line in a `data:` field; ids, event names,
// retry hints and comments (heartbeats) repeat what the JSON says, or nothing.
bool LooksLikeServerSentEvents(const std::vector<std::string_view>& lines) {
  for (std::string_view line : lines) {
    if (line.empty()) continue;
    for (std::string_view field : {":", "data:", "id:", "event:", "retry:"}) {
      if (line.substr(0, field.size()) == field) return true;
    }
    return false;
  }
  return false;
}

std::vector<EventLine> EventLines(const std::vector<std::string_view>& lines) {
  const bool sse = LooksLikeServerSentEvents(lines);
  std::vector<EventLine> out;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    if (line.empty()) continue;
    if (sse) {
      if (line.substr(0, 5) != "data:") continue;
      line.remove_prefix(5);
      if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    }
    out.push_back(EventLine{i + 1, line});
  }
  return out;
}

std::string At(const std::string& name, size_t line) { return name + ", line " + std::to_string(line) + ": "; }

// The rules a stream of one whole build keeps (see the header); empty when it keeps them.
class StreamChecker {
 public:
  explicit StreamChecker(const std::string& name) : name_(name) {}

  std::string Check(const Event& e, size_t line) {
    const std::string at = At(name_, line);
    const bool first = count_++ == 0;
    if (first && e.type != EventType::kBuildStart) {
      return at + "the stream starts with a \"" + std::string(EventTypeName(e.type)) +
             "\" event, not build_start: the file lacks its start (cut, or a part of a longer file)";
    }
    if (!first && e.type == EventType::kBuildStart) {
      return at + "a second build_start (build " + e.build +
             "): the file holds more than one build; replay one build per file";
    }
    if (finished_) return at + "an event after build_finish: the file holds more than one build, or was edited";
    if (!first && e.seq <= last_seq_) {
      return at + "seq " + std::to_string(e.seq) + " after " + std::to_string(last_seq_) +
             ": events out of order or repeated (two streams joined, or the file was edited)";
    }
    last_seq_ = e.seq;
    if (e.type == EventType::kPhaseStart) started_.insert(e.id);
    if ((e.type == EventType::kStep || e.type == EventType::kPhaseFinish) && !started_.contains(e.id)) {
      return at + "\"" + std::string(EventTypeName(e.type)) + "\" for phase id " + std::to_string(e.id) +
             ", which the stream never started: the file was edited or events are missing";
    }
    finished_ = e.type == EventType::kBuildFinish;
    return {};
  }

  bool finished() const { return finished_; }

 private:
  const std::string& name_;
  size_t count_ = 0;
  uint64_t last_seq_ = 0;
  bool finished_ = false;
  std::set<int64_t> started_;
};

RecordedStreamRead Refused(std::string error) { return RecordedStreamRead{std::nullopt, std::move(error)}; }

}  // namespace

RecordedStreamRead ParseRecordedStream(const std::string& bytes, const std::string& name) {
  const std::vector<EventLine> lines = EventLines(SplitLines(bytes));
  if (lines.empty()) return Refused(name + " holds no event: " + std::string(kWhatItTakes));
  RecordedStream stream;
  StreamChecker checker(name);
  for (const EventLine& line : lines) {
    if (line.text.size() > kMaxLineBytes) {
      return Refused(At(name, line.number) + "a line of more than " + std::to_string(kMaxLineBytes >> 20) +
                     " MiB: not an event of trtwatch's stream");
    }
    Event event;
    std::string why;
    if (!EventFromJson(line.text, &event, &why)) {
      return Refused(At(name, line.number) + "not an event of trtwatch's stream (" + why + "); " +
                     std::string(kWhatItTakes));
    }
    if (std::string broken = checker.Check(event, line.number); !broken.empty()) return Refused(broken);
    stream.events.push_back(std::move(event));
  }
  if (!checker.finished()) {
    return Refused(name + " ends at line " + std::to_string(lines.back().number) +
                   " without build_finish: the file is truncated (the build was still running, or the file "
                   "was cut); nothing was played");
  }
  return RecordedStreamRead{std::move(stream), {}};
}

RecordedStreamRead ReadRecordedStream(const std::string& path) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return Refused("cannot read " + path + ": " + ec.message());
  if (size > kMaxStreamBytes) {
    return Refused(path + " is " + std::to_string(size >> 20) + " MiB, more than the " +
                   std::to_string(kMaxStreamBytes >> 20) + " MiB a build's stream can be: " +
                   std::string(kWhatItTakes));
  }
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) return Refused("cannot read " + path);
  return ParseRecordedStream(bytes, path);
}

}  // namespace trtwatch::replay
