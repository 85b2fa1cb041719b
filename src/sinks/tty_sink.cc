#include "sinks/tty_sink.h"

#include <algorithm>

#include "sinks/summary.h"
#include "sinks/tty_frame.h"

namespace trtwatch {

namespace {

constexpr const char* kHideCursor = "\x1b[?25l";
constexpr const char* kShowCursor = "\x1b[?25h";
constexpr const char* kClearToEol = "\x1b[K";
constexpr const char* kClearDown = "\x1b[J";

std::string Paint(bool color, const std::string& text, const char* sgr) {
  return color ? std::string("\x1b[") + sgr + "m" + text + "\x1b[0m" : text;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

}  // namespace

TtySink::TtySink(const Clock& clock, TtyOptions options) : clock_(clock), options_(std::move(options)) {
  render_ = std::thread([this] { RenderLoop(); });
}

TtySink::~TtySink() {
  StopRenderThread();
  MutexLock lock(&term_mu_);
  if (!abandoned_) {
    const std::string out = ClearFrame(QueryTerminalSize(options_.fd).columns) + kShowCursor;
    WriteAll(options_.fd, out.data(), out.size());
    abandoned_ = true;
  }
}

void TtySink::OnEvent(const Event& event) {
  MutexLock lock(&mu_);
  if (event.type == EventType::kBuildStart) {
    origin_ns_ = clock_.NowNs() - static_cast<int64_t>(event.t * 1e9);
    started_ = true;
  }
  tree_.Apply(event);
  if (event.type == EventType::kLog && event.severity <= Severity::kWarning) {
    const bool error = event.severity <= Severity::kError;
    logs_.push_back(Paint(options_.color, std::string(SeverityName(event.severity)) + ":", error ? "31" : "33") + " " +
                    Printable(event.message));
  }
  if (event.type == EventType::kBuildFinish) finish_ = event;
}

void TtySink::SetCancelHint(std::string hint) {
  MutexLock lock(&mu_);
  cancel_hint_ = std::move(hint);
}

std::string TtySink::ClearFrame(int columns) {
  // Rows the last frame takes now: a narrower terminal wraps its lines.
  size_t rows = 0;
  const size_t cols = static_cast<size_t>(std::max(columns, 1));
  for (size_t w : drawn_widths_) rows += std::max<size_t>(1, (w + cols - 1) / cols);
  drawn_widths_.clear();
  last_frame_.clear();
  std::string out = "\r";
  if (rows > 0) out += "\x1b[" + std::to_string(rows) + "A";
  return out + kClearDown;
}

void TtySink::Draw(const std::vector<std::string>& logs, const std::vector<std::string>& frame, int columns) {
  std::string out = kHideCursor;
  out += ClearFrame(columns);
  for (const std::string& line : logs) out += line + kClearToEol + "\n";
  for (const std::string& line : frame) {
    out += line + kClearToEol + "\n";
    drawn_widths_.push_back(DisplayWidth(line));
  }
  out += kShowCursor;
  last_frame_ = Join(frame);
  WriteAll(options_.fd, out.data(), out.size());
}

void TtySink::RenderLoop() {
  using Steady = std::chrono::steady_clock;
  const Steady::time_point first_frame = Steady::now() + options_.first_frame_after;
  Steady::time_point next = Steady::now();
  for (;;) {
    std::shared_ptr<const TreeSnapshot> snapshot;
    std::vector<std::string> logs;
    std::string hint;
    int64_t origin = 0;
    {
      MutexLock lock(&mu_);
      next += options_.frame_period;
      for (auto now = Steady::now(); !stop_ && now < next; now = Steady::now()) cv_.WaitFor(&mu_, next - now);
      if (stop_) return;
      if (next < Steady::now()) next = Steady::now();  // do not burst after a long stall
      if (!started_) continue;
      snapshot = tree_.Snapshot();
      logs.swap(logs_);
      hint = cancel_hint_;
      origin = origin_ns_;
    }
    // A cancel request is shown at once, even in the first half-second.
    const bool frame_due = Steady::now() >= first_frame || snapshot->cancel_reason.has_value();
    if (!frame_due && logs.empty()) continue;

    const TerminalSize size = options_.size ? options_.size() : QueryTerminalSize(options_.fd);
    std::vector<std::string> frame;
    if (frame_due) {
      FrameOptions frame_options;
      frame_options.width = size.columns;
      frame_options.height = size.rows;
      frame_options.color = options_.color;
      frame_options.unicode = options_.unicode;
      frame_options.cancel_hint = hint;
      frame = RenderFrame(*snapshot, NsToSeconds(clock_.NowNs() - origin), frame_options);
    }
    MutexLock lock(&term_mu_);
    if (abandoned_) continue;
    if (!IsForeground(options_.fd)) {
      // A job in the background (`bg`) must not draw over the shell; its log lines
      // still go out, as any program's output would.
      std::string out;
      for (const std::string& line : logs) out += line + "\n";
      if (drawn_widths_.empty()) WriteAll(options_.fd, out.data(), out.size());
      continue;
    }
    if (suspended_) frame.clear();
    if (logs.empty() && Join(frame) == last_frame_) continue;  // nothing changed
    Draw(logs, frame, size.columns);
  }
}

void TtySink::StopRenderThread() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  cv_.SignalAll();
  if (render_.joinable()) render_.join();
}

void TtySink::Close() {
  StopRenderThread();
  std::vector<std::string> lines;
  {
    MutexLock lock(&mu_);
    lines.swap(logs_);
    if (started_) lines.push_back(Paint(options_.color, DescribeBuild(tree_.current()), "1"));
    if (finish_) {
      std::vector<std::string> summary = FormatSummary(*finish_);
      const char* colour = finish_->status == BuildStatus::kSucceeded ? "1;32"
                           : finish_->status == BuildStatus::kFailed  ? "1;31"
                                                                      : "1;33";
      for (size_t i = 0; i < summary.size(); ++i) {
        lines.push_back(i == 0 ? Paint(options_.color, summary[i], colour) : summary[i]);
      }
    }
  }
  MutexLock lock(&term_mu_);
  if (abandoned_) return;
  std::string out = ClearFrame(QueryTerminalSize(options_.fd).columns);
  for (const std::string& line : lines) out += line + "\n";
  out += kShowCursor;
  WriteAll(options_.fd, out.data(), out.size());
  abandoned_ = true;  // the view is over: draw nothing more
}

void TtySink::Suspend() {
  MutexLock lock(&term_mu_);
  if (abandoned_) return;
  const std::string out = ClearFrame(QueryTerminalSize(options_.fd).columns) + kShowCursor;
  WriteAll(options_.fd, out.data(), out.size());
  suspended_ = true;
}

void TtySink::Resume() {
  MutexLock lock(&term_mu_);
  suspended_ = false;
  last_frame_.clear();
}

void TtySink::Redraw() {
  MutexLock lock(&term_mu_);
  last_frame_ = "\n(redraw)";  // differs from any frame's text
}

void TtySink::Abandon() {
  MutexLock lock(&term_mu_);
  if (abandoned_) return;
  const std::string out = ClearFrame(QueryTerminalSize(options_.fd).columns) + kShowCursor;
  WriteAll(options_.fd, out.data(), out.size());
  abandoned_ = true;
}

}  // namespace trtwatch
