// TtySink's terminal protocol, written to a file instead of a terminal. No timing is
// asserted: what is checked holds however many frames the render thread drew.
#include "sinks/tty_sink.h"
#include "support/fake_clock.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <string>

namespace trtwatch {
namespace {

// True if `text` holds an SGR sequence (ESC [ digits/semicolons m).
bool HasSgr(const std::string& text) {
  for (size_t i = text.find("\x1b["); i != std::string::npos; i = text.find("\x1b[", i + 1)) {
    size_t k = i + 2;
    while (k < text.size() && (std::isdigit(static_cast<unsigned char>(text[k])) || text[k] == ';')) ++k;
    if (k < text.size() && text[k] == 'm') return true;
  }
  return false;
}

class TtySinkTest : public ::testing::Test {
 protected:
  void SetUp() override { file_ = std::tmpfile(); }
  void TearDown() override { std::fclose(file_); }

  TtyOptions Options() {
    TtyOptions options;
    options.fd = fileno(file_);
    options.first_frame_after = std::chrono::milliseconds(0);
    options.frame_period = std::chrono::milliseconds(1);
    options.size = [] { return TerminalSize{100, 30}; };
    return options;
  }

  std::string Written() {
    std::string text;
    std::rewind(file_);
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, file_)) > 0) text.append(buf, n);
    return text;
  }

  static void Feed(TtySink& sink) {
    Event start;
    start.type = EventType::kBuildStart;
    start.backend = "simulated";
    start.facts = {{"profile", "small-cnn"}, {"seed", "1"}, {"speed", "1"}};
    sink.OnEvent(start);
    Event phase;
    phase.type = EventType::kPhaseStart;
    phase.id = 1;
    phase.phase = "Building engine";
    phase.total = 6;
    sink.OnEvent(phase);
    Event warning;
    warning.type = EventType::kLog;
    warning.severity = Severity::kWarning;
    warning.message = "weights are FP32";
    sink.OnEvent(warning);
  }

  std::FILE* file_ = nullptr;
  FakeClock clock_;
};

TEST_F(TtySinkTest, CloseReplacesTheViewWithTheSummaryAndShowsTheCursor) {
  TtySink sink(clock_, Options());
  Feed(sink);
  Event finish;
  finish.type = EventType::kBuildFinish;
  finish.status = BuildStatus::kSucceeded;
  finish.elapsed = 1.5;
  sink.OnEvent(finish);
  sink.Close();
  const std::string out = Written();
  EXPECT_NE(out.find("SIMULATED build of small-cnn"), std::string::npos);
  EXPECT_NE(out.find("build succeeded after 1.5s"), std::string::npos);
  EXPECT_NE(out.find("warning: weights are FP32"), std::string::npos);  // logs are kept
  // Every hide is followed by a show, and the output ends with the cursor visible.
  const size_t last_hide = out.rfind("\x1b[?25l");
  const size_t last_show = out.rfind("\x1b[?25h");
  ASSERT_NE(last_show, std::string::npos);
  EXPECT_TRUE(last_hide == std::string::npos || last_show > last_hide);
  EXPECT_FALSE(HasSgr(out));  // colour off
}

TEST_F(TtySinkTest, AbandonRestoresTheTerminalAndStopsDrawing) {
  TtySink sink(clock_, Options());
  Feed(sink);
  sink.Abandon();
  const std::string at_abandon = Written();
  ASSERT_GE(at_abandon.size(), 6u);
  EXPECT_EQ(at_abandon.substr(at_abandon.size() - 6), "\x1b[?25h");
  sink.Close();  // nothing more once abandoned: no summary over the exit message
  EXPECT_EQ(Written(), at_abandon);
}

TEST_F(TtySinkTest, DestructionWithoutCloseStillRestoresTheTerminal) {
  {
    TtySink sink(clock_, Options());
    Feed(sink);
  }
  const std::string out = Written();
  ASSERT_GE(out.size(), 6u);
  EXPECT_EQ(out.substr(out.size() - 6), "\x1b[?25h");
}

TEST_F(TtySinkTest, SuspendClearsAndShowsTheCursor) {
  TtySink sink(clock_, Options());
  Feed(sink);
  sink.Suspend();
  const std::string at_suspend = Written();
  EXPECT_EQ(at_suspend.substr(at_suspend.size() - 6), "\x1b[?25h");
  EXPECT_NE(at_suspend.rfind("\x1b[J"), std::string::npos);
  sink.Resume();
  sink.Close();
  EXPECT_NE(Written().find("SIMULATED build of small-cnn"), std::string::npos);
}

}  // namespace
}  // namespace trtwatch
