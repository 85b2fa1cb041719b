// TtySink: the live terminal view (--progress tty).
//
// Threading contract:
//  - OnEvent and Close run on the sink's delivery thread. OnEvent only applies the event
//    to a PhaseTree under mu_; it never writes to the terminal, so a slow terminal never
//    holds up delivery for longer than a lock.
//  - The sink's own render thread draws: at most once per `frame_period`, nothing
//    before `first_frame_after` unless a cancel was requested (short builds never
//    flicker; a Ctrl+C is answered at once), and only when the frame's
//    text changed. Warnings and errors from the builder's log scroll above the frame.
//    The cursor is hidden only inside one frame's single write, so a crash never leaves
//    it hidden.
//  - Suspend / Resume / Redraw / Abandon / SetCancelHint may be called from any thread
//    (the signal thread). Terminal writes are serialised by term_mu_; mu_ and term_mu_
//    are never held together.
//  - Close stops the render thread, clears the frame and prints the summary
//    (sinks/summary.h). The destructor restores the terminal if Close never ran.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/mutex.h"
#include "core/phase_tree.h"
#include "core/sink.h"
#include "platform/terminal.h"

namespace trtwatch {

struct TtyOptions {
  int fd = 2;
  bool color = false;
  bool unicode = true;
  std::chrono::milliseconds first_frame_after{500};
  std::chrono::milliseconds frame_period{100};
  // The terminal's size, asked before every frame. Default: QueryTerminalSize(fd).
  std::function<TerminalSize()> size;
};

class TtySink final : public Sink {
 public:
  TtySink(const Clock& clock, TtyOptions options);
  ~TtySink() override;
  TtySink(const TtySink&) = delete;
  TtySink& operator=(const TtySink&) = delete;

  void OnEvent(const Event& event) override EXCLUDES(mu_);
  void Close() override EXCLUDES(mu_, term_mu_);

  // Shown under the cancelling notice ("press Ctrl+C again to force").
  void SetCancelHint(std::string hint) EXCLUDES(mu_);
  // SIGTSTP: clear the frame and show the cursor; draw nothing until Resume.
  void Suspend() EXCLUDES(term_mu_);
  // SIGCONT: draw again from the next frame on.
  void Resume() EXCLUDES(term_mu_);
  // SIGWINCH: lay the next frame out again even if its text did not change.
  void Redraw() EXCLUDES(term_mu_);
  // A forced exit: clear the frame, show the cursor and never draw again.
  void Abandon() EXCLUDES(term_mu_);

 private:
  void RenderLoop() EXCLUDES(mu_, term_mu_);
  // Writes `logs` above the frame and the frame itself (empty: none) in one write.
  void Draw(const std::vector<std::string>& logs, const std::vector<std::string>& frame, int columns)
      REQUIRES(term_mu_);
  // Escape text that moves to the frame's first row and clears down to the end.
  std::string ClearFrame(int columns) REQUIRES(term_mu_);
  void StopRenderThread() EXCLUDES(mu_);

  const Clock& clock_;
  const TtyOptions options_;

  Mutex mu_;
  CondVar cv_;
  // The view's model, protected by mu_:
  PhaseTree tree_ GUARDED_BY(mu_);
  int64_t origin_ns_ GUARDED_BY(mu_) = 0;  // clock time of the build's t = 0
  bool started_ GUARDED_BY(mu_) = false;   // build_start seen
  std::vector<std::string> logs_ GUARDED_BY(mu_);  // not yet printed
  std::optional<Event> finish_ GUARDED_BY(mu_);
  std::string cancel_hint_ GUARDED_BY(mu_) = "press Ctrl+C to stop waiting";
  bool stop_ GUARDED_BY(mu_) = false;

  Mutex term_mu_;
  // What is on the terminal, protected by term_mu_:
  std::vector<size_t> drawn_widths_ GUARDED_BY(term_mu_);  // columns of each frame line
  std::string last_frame_ GUARDED_BY(term_mu_);
  bool suspended_ GUARDED_BY(term_mu_) = false;
  bool abandoned_ GUARDED_BY(term_mu_) = false;  // also set once Close printed the summary

  std::thread render_;  // started last
};

}  // namespace trtwatch
