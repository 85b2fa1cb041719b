#include "history/history_index.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "history/estimator.h"
#include "platform/utf8_edges.h"
#include "protocol/utf8.h"

namespace trtwatch::history {

using json = nlohmann::json;

namespace {

// FNV-1a, 64 bits: stable across builds and platforms (std::hash is not), and the
// index only tells lines apart with it; a match is checked again on the entry.
uint64_t Fnv1a(std::string_view bytes, uint64_t hash = 14695981039346656037ull) {
  for (const unsigned char c : bytes) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

std::string Hex(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

// Tabs and line ends would split a record; keys are hex digests, errors are for people.
std::string OneField(std::string_view text) {
  std::string field(text);
  std::replace_if(field.begin(), field.end(), [](char c) { return c == '\t' || c == '\n' || c == '\r'; }, ' ');
  return field;
}

std::vector<std::string_view> Fields(std::string_view line, size_t count) {
  std::vector<std::string_view> fields;
  while (fields.size() + 1 < count) {
    const size_t tab = line.find('\t');
    if (tab == std::string_view::npos) break;
    fields.push_back(line.substr(0, tab));
    line.remove_prefix(tab + 1);
  }
  fields.push_back(line);
  return fields;
}

template <typename T>
bool Number(std::string_view text, T* value, int base = 10) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value, base);
  return ec == std::errc() && end == text.data() + text.size();
}

bool IsVersionLine(std::string_view line) {
  const json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  return j.is_object() && j.contains("trtwatch_history");
}

// ---- the summary's fields (history_index.h): text escaped, numbers exact ----

bool IndexEscapes(char c) { return c == '%' || c == '\t' || c == '\n' || c == '\r' || c == ';' || c == '|'; }

std::string IndexEscaped(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (!IndexEscapes(c)) {
      out += c;
      continue;
    }
    out += '%';
    out += kHex[static_cast<unsigned char>(c) >> 4];
    out += kHex[static_cast<unsigned char>(c) & 15];
  }
  return out;
}

std::optional<std::string> IndexUnescaped(std::string_view field) {
  if (field.find('%') == std::string_view::npos) return ValidBoundedText(field, kMaxTextBytes);
  std::string out;
  out.reserve(field.size());
  for (size_t i = 0; i < field.size(); ++i) {
    unsigned value = 0;
    if (field[i] != '%') {
      out += field[i];
    } else if (i + 2 < field.size() && Number(field.substr(i + 1, 2), &value, 16)) {
      out += static_cast<char>(value);
      i += 2;
    } else {
      return std::nullopt;
    }
  }
  return ValidBoundedText(out, kMaxTextBytes);
}

std::string IndexDouble(double value) {
  char text[32];
  const auto [end, ec] = std::to_chars(text, text + sizeof text, value);
  return ec == std::errc() ? std::string(text, end) : "0";
}

// A duration as EntryFromJson accepts one: finite, 0 to 1e9 seconds.
bool IndexDuration(std::string_view text, double* value) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return ec == std::errc() && end == text.data() + text.size() && std::isfinite(*value) && *value >= 0 && *value <= 1e9;
}

std::string IndexFamilies(const std::vector<FamilyTime>& families) {
  std::string out;
  for (const FamilyTime& f : families) {
    if (!out.empty()) out += ';';
    out += IndexEscaped(f.family) + "|" + std::to_string(f.count) + "|" + IndexDouble(f.seconds) + "|" +
           IndexDouble(f.self_seconds);
  }
  return out;
}

Status ReadIndexFamilies(std::string_view field, std::vector<FamilyTime>* families) {
  while (!field.empty()) {
    const size_t end = std::min(field.find(';'), field.size());
    const std::string_view one = field.substr(0, end);
    field.remove_prefix(std::min(end + 1, field.size()));
    if (families->size() >= kMaxFamilies) {
      return Status::Error("families holds more than " + std::to_string(kMaxFamilies) + " items");
    }
    std::vector<std::string_view> parts;
    for (size_t from = 0;;) {
      const size_t bar = one.find('|', from);
      parts.push_back(one.substr(from, bar == std::string_view::npos ? std::string_view::npos : bar - from));
      if (bar == std::string_view::npos) break;
      from = bar + 1;
    }
    FamilyTime f;
    std::optional<std::string> name = parts.size() == 4 ? IndexUnescaped(parts[0]) : std::nullopt;
    if (!name || !Number(parts[1], &f.count) || f.count < 0 || !IndexDuration(parts[2], &f.seconds) ||
        !IndexDuration(parts[3], &f.self_seconds)) {
      return Status::Error("a phase family in the index is not name|count|seconds|self");
    }
    f.family = std::move(*name);
    families->push_back(std::move(f));
  }
  return OkStatus();
}

bool IndexLowercaseHex(std::string_view text) {
  return !text.empty() && text.size() <= 128 &&
         std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

}  // namespace

uint64_t SimilarityHash(const Facts& key_parts) {
  uint64_t hash = Fnv1a("similar");
  for (const auto& [name, value] : WithoutGpuName(key_parts)) {
    hash = Fnv1a(std::string_view(name.c_str(), name.size() + 1), hash);  // the terminator separates
    hash = Fnv1a(std::string_view(value.c_str(), value.size() + 1), hash);
  }
  return hash;
}

IndexRecord RecordOf(std::string_view line, uint64_t offset, uint64_t line_number) {
  IndexRecord record;
  record.offset = offset;
  record.length = line.size();
  record.line = line_number;
  ParsedEntry parsed = EntryFromJson(line);
  if (!parsed.entry) {
    record.damaged = true;
    record.text = OneField(parsed.error);
    return record;
  }
  HistoryEntry& entry = *parsed.entry;
  record.finished_at = entry.finished_at;
  record.status = entry.status;
  record.key = OneField(entry.key);
  record.similar = SimilarityHash(entry.key_parts);
  record.text = IndexDouble(entry.elapsed) + "\t" + IndexEscaped(entry.build) + "\t" + IndexEscaped(entry.model) +
                "\t" + IndexEscaped(entry.backend) + "\t" + IndexEscaped(entry.error) + "\t" +
                IndexFamilies(entry.families);
  return record;
}

Result<HistoryEntry> SummaryOf(const IndexRecord& record, SummaryDetail detail) {
  const std::vector<std::string_view> f = Fields(record.text, 6);
  if (record.damaged || f.size() != 6) return Status::Error("the index's summary is not 6 fields");
  HistoryEntry entry;
  entry.key = record.key;
  entry.finished_at = record.finished_at;
  entry.status = record.status;
  std::optional<std::string> build = IndexUnescaped(f[1]);
  std::optional<std::string> model = IndexUnescaped(f[2]);
  std::optional<std::string> backend = IndexUnescaped(f[3]);
  std::optional<std::string> error = IndexUnescaped(f[4]);
  if (!IndexLowercaseHex(entry.key)) return Status::Error("key is not a lowercase hex digest");
  if (entry.finished_at < 0) return Status::Error("finished_at is negative");
  if (!IndexDuration(f[0], &entry.elapsed)) return Status::Error("elapsed is not a duration");
  if (!build || !model || !backend || !error) return Status::Error("a text field of the index is badly escaped");
  entry.build = std::move(*build);
  entry.model = std::move(*model);
  entry.backend = std::move(*backend);
  entry.error = std::move(*error);
  if (detail == SummaryDetail::kFamilies) {
    if (Status read = ReadIndexFamilies(f[5], &entry.families); !read.ok()) return read;
  }
  return entry;
}

std::string RecordLine(const IndexRecord& r) {
  const std::string place = std::to_string(r.offset) + "\t" + std::to_string(r.length) + "\t" + std::to_string(r.line);
  if (r.damaged) return "D\t" + place + "\t" + r.text + "\n";
  return "E\t" + place + "\t" + std::to_string(r.finished_at) + "\t" + std::string(BuildStatusName(r.status)) + "\t" +
         r.key + "\t" + Hex(r.similar) + "\t" + r.text + "\n";
}

namespace {

// A record line; its text (the summary, most of the line) only `with_text`.
std::optional<IndexRecord> ParseRecordLine(std::string_view line, bool with_text) {
  const std::vector<std::string_view> f = Fields(line, 9);
  IndexRecord r;
  if (f.size() < 5 || (f[0] != "E" && f[0] != "D")) return std::nullopt;
  if (!Number(f[1], &r.offset) || !Number(f[2], &r.length) || !Number(f[3], &r.line)) return std::nullopt;
  r.damaged = f[0] == "D";
  if (r.damaged) {
    r.text = std::string(Fields(line, 5).back());  // the error may hold no tab, but keep it whole
    return r;
  }
  if (f.size() != 9 || !Number(f[4], &r.finished_at) || !ParseBuildStatus(std::string(f[5]), &r.status) ||
      !Number(f[7], &r.similar, 16)) {
    return std::nullopt;
  }
  r.key = std::string(f[6]);
  if (with_text) r.text = std::string(f[8]);
  return r;
}

}  // namespace

std::optional<IndexRecord> ParseRecord(std::string_view line) { return ParseRecordLine(line, true); }

std::string IndexHeader(std::string_view first_entry_line) {
  return json{{"trtwatch_history_index", kIndexVersion}, {"first", Hex(Fnv1a(first_entry_line))}}.dump() + "\n";
}

HistoryHead ReadHistoryHead(const std::string& history_path) {
  HistoryHead head;
  head.header = IndexHeader("");
  std::ifstream in(Utf8Path(history_path), std::ios::binary);
  if (!in) return head;
  head.exists = true;
  std::string line;
  std::string first_entry;
  if (std::getline(in, line) && !in.eof()) {
    if (IsVersionLine(line)) {
      const json j = json::parse(line, nullptr, false);
      head.version = j["trtwatch_history"].is_number_integer() ? j["trtwatch_history"].get<int>() : 0;
      head.entries_from = line.size() + 1;
      if (std::getline(in, line) && !in.eof()) first_entry = line;
    } else {
      first_entry = line;
    }
  }
  head.header = IndexHeader(first_entry);
  std::error_code ec;
  head.size = std::filesystem::file_size(Utf8Path(history_path), ec);
  if (ec) head.size = 0;
  char last = '\n';
  in.clear();
  if (head.size > 0 && in.seekg(-1, std::ios::end) && in.get(last)) head.ends_in_newline = last == '\n';
  return head;
}

IndexScan ScanIndex(const std::string& index_path, const HistoryHead& head,
                    const std::function<void(const IndexRecord&)>& visit) {
  IndexScan scan;
  std::ifstream in(Utf8Path(index_path), std::ios::binary);
  std::string line;
  if (!in || !std::getline(in, line) || line + "\n" != head.header) return scan;
  scan.last_line = head.entries_from > 0 ? 1 : 0;
  scan.covered = head.entries_from;
  while (std::getline(in, line) && !in.eof()) {  // a record without its newline is being written
    std::optional<IndexRecord> record = ParseRecordLine(line, visit != nullptr);
    if (!record || record->offset < scan.covered || record->line <= scan.last_line) return IndexScan{};
    scan.covered = record->offset + record->length + 1;
    scan.last_line = record->line;
    ++scan.records;
    if (!record->damaged && !scan.oldest) scan.oldest = record->finished_at;
    if (visit) visit(*record);
  }
  scan.valid = scan.covered <= head.size;
  return scan;
}

bool ForEachLineFrom(const std::string& history_path, uint64_t offset, uint64_t first_line,
                     const std::function<void(std::string_view, uint64_t, uint64_t)>& visit) {
  std::ifstream in(Utf8Path(history_path), std::ios::binary);
  if (!in || !in.seekg(static_cast<std::streamoff>(offset))) return false;
  std::string line;
  uint64_t number = first_line;
  while (std::getline(in, line) && !in.eof()) {
    visit(line, offset, number++);
    offset += line.size() + 1;
  }
  return true;
}

std::optional<std::string> ReadLineAt(const std::string& history_path, const IndexRecord& record) {
  std::ifstream in(Utf8Path(history_path), std::ios::binary);
  if (!in || !in.seekg(static_cast<std::streamoff>(record.offset))) return std::nullopt;
  std::string line(record.length + 1, '\0');
  if (!in.read(line.data(), static_cast<std::streamsize>(line.size())) || line.back() != '\n') return std::nullopt;
  line.pop_back();
  return line;
}

}  // namespace trtwatch::history
