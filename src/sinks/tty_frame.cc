#include "sinks/tty_frame.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "sinks/format.h"

namespace trtwatch {

namespace {

// SGR sequences; empty strings when colour is off.
struct Palette {
  explicit Palette(bool on) : on_(on) {}
  std::string Paint(std::string_view text, const char* sgr) const {
    if (!on_ || text.empty()) return std::string(text);
    return std::string("\x1b[") + sgr + "m" + std::string(text) + "\x1b[0m";
  }
  bool on_;
};

constexpr const char* kBold = "1";
constexpr const char* kDim = "2";
constexpr const char* kGreen = "32";
constexpr const char* kYellow = "33";
constexpr const char* kBoldYellow = "1;33";
constexpr const char* kCyan = "36";
constexpr const char* kRed = "31";

// Decodes one UTF-8 sequence at text[i]; sets *len. Invalid bytes decode as U+FFFD.
char32_t Decode(std::string_view text, size_t i, size_t* len) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b0 = byte(i);
  size_t n = b0 < 0x80 ? 1 : (b0 >> 5) == 0x6 ? 2 : (b0 >> 4) == 0xE ? 3 : (b0 >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > text.size()) {
    *len = 1;
    return 0xFFFD;
  }
  char32_t cp = n == 1 ? b0 : n == 2 ? (b0 & 0x1F) : n == 3 ? (b0 & 0x0F) : (b0 & 0x07);
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) {
      *len = 1;
      return 0xFFFD;
    }
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  *len = n;
  return cp;
}

int CodepointWidth(char32_t cp) {
  if (cp == 0) return 0;
  if ((cp >= 0x0300 && cp <= 0x036F) || (cp >= 0x200B && cp <= 0x200F) || (cp >= 0xFE00 && cp <= 0xFE0F) ||
      (cp >= 0x20D0 && cp <= 0x20FF)) {
    return 0;  // combining marks, zero-width spaces, variation selectors
  }
  if ((cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF) || (cp >= 0xAC00 && cp <= 0xD7A3) ||
      (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF00 && cp <= 0xFF60) ||
      (cp >= 0xFFE0 && cp <= 0xFFE6) || (cp >= 0x1F300 && cp <= 0x1F64F) || (cp >= 0x1F900 && cp <= 0x1F9FF) ||
      (cp >= 0x20000 && cp <= 0x3FFFD)) {
    return 2;
  }
  return 1;
}

// Length in bytes of the escape sequence at text[i] (text[i] == ESC).
size_t EscapeLength(std::string_view text, size_t i) {
  if (i + 1 >= text.size()) return 1;
  if (text[i + 1] == '[') {  // CSI: parameters, then a final byte in 0x40..0x7E
    size_t k = i + 2;
    while (k < text.size() && !(text[k] >= 0x40 && text[k] <= 0x7E)) ++k;
    return std::min(k + 1, text.size()) - i;
  }
  return 2;
}

std::string PadLeft(const std::string& text, size_t width) {
  const size_t w = DisplayWidth(text);
  return w >= width ? text : std::string(width - w, ' ') + text;
}

std::string PadRight(const std::string& text, size_t width) {
  const size_t w = DisplayWidth(text);
  return w >= width ? text : text + std::string(width - w, ' ');
}

std::string Repeat(std::string_view unit, int count) {
  std::string out;
  for (int i = 0; i < count; ++i) out += unit;
  return out;
}

std::string Bar(int32_t done, int32_t total, int width, bool cancelling, const Palette& p, bool unicode) {
  const double fraction = total > 0 ? std::clamp(static_cast<double>(done) / total, 0.0, 1.0) : 0.0;
  const int filled = static_cast<int>(std::lround(fraction * width));
  return p.Paint(Repeat(unicode ? "\u2588" : "#", filled), cancelling ? kYellow : kGreen) +
         p.Paint(Repeat(unicode ? "\u2591" : "-", width - filled), kDim);
}

// Which active phases fit in `rows`: the newest phase and its ancestors first, then
// the shallowest others (newest first within a depth) whose parent is shown.
std::vector<bool> ChooseShown(const std::vector<PhaseNode>& nodes, int rows) {
  std::vector<bool> shown(nodes.size(), static_cast<int>(nodes.size()) <= rows);
  if (static_cast<int>(nodes.size()) <= rows || rows <= 0) return shown;
  std::unordered_map<int64_t, size_t> position;
  for (size_t i = 0; i < nodes.size(); ++i) position[nodes[i].id] = i;
  const auto parent_of = [&](size_t i) -> long {
    auto it = position.find(nodes[i].parent);
    return it == position.end() ? -1 : static_cast<long>(it->second);
  };

  size_t newest = 0;
  for (size_t i = 1; i < nodes.size(); ++i) {
    if (nodes[i].id > nodes[newest].id) newest = i;
  }
  std::vector<size_t> chain;  // newest first, root last
  for (long i = static_cast<long>(newest); i >= 0; i = parent_of(static_cast<size_t>(i))) {
    chain.push_back(static_cast<size_t>(i));
  }
  int used = 0;
  // A chain deeper than the terminal keeps its deepest phases: that is where the work is.
  for (size_t k = 0; k < chain.size() && used < rows; ++k, ++used) shown[chain[k]] = true;

  std::vector<size_t> others;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!shown[i]) others.push_back(i);
  }
  std::stable_sort(others.begin(), others.end(), [&](size_t a, size_t b) {
    if (nodes[a].depth != nodes[b].depth) return nodes[a].depth < nodes[b].depth;
    return nodes[a].id > nodes[b].id;
  });
  for (size_t i : others) {
    if (used >= rows) break;
    const long parent = parent_of(i);
    if (parent >= 0 && !shown[static_cast<size_t>(parent)]) continue;
    shown[i] = true;
    ++used;
  }
  return shown;
}

}  // namespace

size_t DisplayWidth(std::string_view text) {
  size_t width = 0;
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '\x1b') {
      i += EscapeLength(text, i);
      continue;
    }
    size_t len = 1;
    width += static_cast<size_t>(CodepointWidth(Decode(text, i, &len)));
    i += len;
  }
  return width;
}

std::string TruncateToWidth(std::string_view text, size_t width) {
  std::string out;
  size_t used = 0;
  bool coloured = false;
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '\x1b') {
      const size_t len = EscapeLength(text, i);
      out.append(text.substr(i, len));
      coloured = text.substr(i, len) != "\x1b[0m";
      i += len;
      continue;
    }
    size_t len = 1;
    const size_t w = static_cast<size_t>(CodepointWidth(Decode(text, i, &len)));
    if (used + w > width) {
      if (coloured) out += "\x1b[0m";
      return out;
    }
    out.append(text.substr(i, len));
    used += w;
    i += len;
  }
  return out;
}

std::string ElideMiddle(std::string_view text, size_t width, bool unicode) {
  if (DisplayWidth(text) <= width) return std::string(text);
  const std::string_view mark = unicode ? "\u2026" : "...";
  const size_t mark_w = unicode ? 1 : 3;
  if (width <= mark_w) return std::string(unicode ? mark : std::string_view("...").substr(0, width));
  // Split into characters with their widths, then keep a head and a tail.
  std::vector<std::pair<std::string_view, size_t>> chars;
  for (size_t i = 0; i < text.size();) {
    size_t len = 1;
    const size_t w = static_cast<size_t>(CodepointWidth(Decode(text, i, &len)));
    chars.emplace_back(text.substr(i, len), w);
    i += len;
  }
  const size_t room = width - mark_w;
  const size_t head_room = (room + 1) / 2;
  std::string head, tail;
  size_t head_w = 0, tail_w = 0, h = 0;
  for (; h < chars.size() && head_w + chars[h].second <= head_room; ++h) {
    head += chars[h].first;
    head_w += chars[h].second;
  }
  std::vector<std::string_view> tail_chars;
  for (size_t t = chars.size(); t > h && tail_w + chars[t - 1].second <= room - head_w; --t) {
    tail_chars.push_back(chars[t - 1].first);
    tail_w += chars[t - 1].second;
  }
  for (auto it = tail_chars.rbegin(); it != tail_chars.rend(); ++it) tail += *it;
  return head + std::string(mark) + tail;
}

std::string Printable(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = '?';
  }
  return out;
}

std::string WholeSeconds(double seconds) {
  if (seconds < 120) return std::to_string(static_cast<long>(std::max(0.0, seconds))) + " s";
  return FormatDuration(seconds);
}

std::string DescribeBuild(const TreeSnapshot& tree) {
  if (tree.backend == "simulated") {
    std::string text = "SIMULATED build of " + Fact(tree.facts, "profile");
    const std::string seed = Fact(tree.facts, "seed");
    const std::string speed = Fact(tree.facts, "speed");
    if (!seed.empty()) text += " (seed " + seed + (speed.empty() ? "" : ", speed " + speed + "x") + ")";
    return Printable(text);
  }
  return Printable(BuildTitle(tree.backend, tree.model, tree.facts));
}

namespace {

// What every part of one frame draws with.
struct FrameContext {
  const TreeSnapshot& tree;
  double now;
  const FrameOptions& options;
  Palette p;
  size_t usable;     // columns a line may fill
  bool cancelling;   // cancel requested, build not yet finished
  std::string dot;   // the separator between header items
};

// Header: what is built, how long it runs, what state it is in.
std::string HeaderLine(const FrameContext& c) {
  const TreeSnapshot& tree = c.tree;
  std::string status = tree.finished ? std::string(BuildStatusName(tree.status))
                       : c.cancelling ? "cancelling"
                                      : "building";
  const char* status_colour = tree.finished ? (tree.status == BuildStatus::kSucceeded ? kGreen : kRed)
                              : c.cancelling ? kBoldYellow
                                             : kCyan;
  const std::string describe = DescribeBuild(tree);
  std::string right = c.dot + FormatDuration(c.now) + c.dot + c.p.Paint(status, status_colour);
  const std::string done = c.dot + std::to_string(tree.phases_finished) + " phases done";
  // The count goes first when space is short; the description is elided only after it.
  if (DisplayWidth(describe) + DisplayWidth(right) + DisplayWidth(done) <= c.usable) right += done;
  const size_t right_w = DisplayWidth(right);
  const size_t room = c.usable > right_w ? c.usable - right_w : 0;
  return TruncateToWidth(c.p.Paint(ElideMiddle(describe, room, c.options.unicode), kBold) + right, c.usable);
}

// Cancelling: said at once, with its reason and how to stop waiting.
void AddCancellingLines(const FrameContext& c, std::vector<std::string>& lines) {
  lines.push_back(TruncateToWidth(
      c.p.Paint(c.options.unicode ? "Cancelling \u2014 waiting for TensorRT to finish the current step\u2026"
                                  : "Cancelling - waiting for TensorRT to finish the current step...",
                kBoldYellow),
      c.usable));
  std::string reason = "  reason: " + Printable(c.tree.cancel_message) + " (" +
                       std::string(CancelReasonName(*c.tree.cancel_reason)) + ")" + c.dot +
                       WholeSeconds(c.now - c.tree.cancel_requested_at) + " ago";
  if (!c.options.cancel_hint.empty()) reason += c.dot + c.options.cancel_hint;
  lines.push_back(TruncateToWidth(reason, c.usable));
}

// Silence: the builder may work for minutes inside one step; show that time passes.
void AddActivityLine(const FrameContext& c, std::vector<std::string>& lines) {
  const double quiet = c.now - c.tree.last_progress_t;
  if (c.tree.finished || !(quiet >= c.options.quiet_after || c.tree.stalled_for)) return;
  std::string activity = "  last activity " + WholeSeconds(quiet) + " ago";
  if (c.tree.stalled_for) {
    activity = c.p.Paint(activity + c.dot + "stall warning (--stall-timeout)", kYellow);
  } else {
    activity = c.p.Paint(activity + " (TensorRT can be busy inside one step)", kDim);
  }
  lines.push_back(TruncateToWidth(activity, c.usable));
}

// The columns of the phase lines: name, bar, done/total and elapsed time.
struct PhaseColumns {
  size_t name = 0;
  size_t bar = 0;
  size_t count = 0;
  static constexpr size_t kElapsed = 6;
};

PhaseColumns ColumnsFor(const std::vector<PhaseNode>& nodes, const std::vector<bool>& shown, size_t usable) {
  PhaseColumns w;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (shown[i]) {
      w.count = std::max(w.count, std::to_string(nodes[i].done).size() + 1 + std::to_string(nodes[i].total).size());
    }
  }
  w.bar = usable >= 70 ? std::clamp<size_t>(usable / 5, 10, 30) : usable >= 50 ? 8 : 0;
  const auto right_part = [&](size_t bar) { return (bar > 0 ? bar + 1 : 0) + 2 + w.count + 2 + PhaseColumns::kElapsed; };
  if (usable < right_part(w.bar) + 12) w.bar = 0;
  w.name = usable > right_part(w.bar) ? usable - right_part(w.bar) : 0;
  return w;
}

std::string PhaseLine(const FrameContext& c, const PhaseNode& node, const PhaseColumns& w) {
  const size_t indent = std::min<size_t>(2 * static_cast<size_t>(node.depth), w.name > 10 ? w.name - 10 : 0);
  const std::string name = ElideMiddle(Printable(node.name), w.name - indent, c.options.unicode);
  std::string line = std::string(indent, ' ') + PadRight(name, w.name - indent);
  if (w.bar > 0) line += " " + Bar(node.done, node.total, static_cast<int>(w.bar), c.cancelling, c.p, c.options.unicode);
  line += "  " + PadLeft(std::to_string(node.done) + "/" + std::to_string(node.total), w.count);
  line += "  " + PadLeft(FormatDuration(c.now - node.started_at), PhaseColumns::kElapsed);
  return TruncateToWidth(line, c.usable);
}

// Phases, depth-first, in `rows` lines; those that do not fit are counted in a last line.
void AddPhaseLines(const FrameContext& c, int rows, std::vector<std::string>& lines) {
  const std::vector<PhaseNode>& nodes = c.tree.active;
  const bool collapse = static_cast<int>(nodes.size()) > rows;
  if (collapse) --rows;  // room for the "more" line
  const std::vector<bool> shown = ChooseShown(nodes, rows);
  const PhaseColumns columns = ColumnsFor(nodes, shown, c.usable);
  int hidden = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!shown[i]) {
      ++hidden;
      continue;
    }
    lines.push_back(PhaseLine(c, nodes[i], columns));
  }
  if (hidden > 0) {
    lines.push_back(TruncateToWidth(
        c.p.Paint("  " + std::string(c.options.unicode ? "\u2026 " : "... ") + std::to_string(hidden) + " more active " +
                      (hidden == 1 ? "phase" : "phases") + " not shown (terminal too short)",
                  kDim),
        c.usable));
  }
}

}  // namespace

std::vector<std::string> RenderFrame(const TreeSnapshot& tree, double now, const FrameOptions& options) {
  const FrameContext c{tree,
                       now,
                       options,
                       Palette(options.color),
                       static_cast<size_t>(std::max(options.width - 1, 10)),
                       tree.cancel_reason.has_value() && !tree.finished,
                       options.unicode ? " \u00b7 " : " | "};
  const int max_rows = std::max(options.height - 1, 1);
  std::vector<std::string> lines;
  lines.push_back(HeaderLine(c));
  // The remaining time from history, counting down between estimates.
  if (tree.estimate && !tree.finished && !c.cancelling) {
    lines.push_back(
        TruncateToWidth("  " + c.p.Paint(EstimateText(*tree.estimate, now - tree.estimate_t, options.unicode), kDim),
                        c.usable));
  }
  if (c.cancelling) AddCancellingLines(c, lines);
  AddActivityLine(c, lines);
  AddPhaseLines(c, max_rows - static_cast<int>(lines.size()), lines);
  if (static_cast<int>(lines.size()) > max_rows) lines.resize(static_cast<size_t>(max_rows));
  return lines;
}

}  // namespace trtwatch
