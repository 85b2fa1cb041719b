// The live terminal view as pure functions: a TreeSnapshot, the time and the terminal's
// size in, the frame's lines out. No I/O, no terminal, no clock: unit-tested as text.
//
// A frame is a header (build, elapsed time, status), an optional activity line
// ("last activity 42 s ago" during silence), the cancelling notice after a cancel
// request, and one line per active phase: indented by depth, a bar, k/n (steps
// reported, i.e. step + 1) and the phase's elapsed time. There is no ETA: TensorRT's
// step counts do not predict time. Every line fits in width - 1 columns (no auto-wrap);
// a tree taller than the terminal keeps the chain of the newest phase and as many
// shallow phases as fit, and counts the rest.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/phase_tree.h"

namespace trtwatch {

struct FrameOptions {
  int width = 80;   // terminal columns
  int height = 24;  // terminal rows; the frame uses at most height - 1
  bool color = false;
  bool unicode = true;          // bars and ellipsis in UTF-8, else ASCII
  double quiet_after = 3.0;     // seconds without progress before the activity line shows
  std::string cancel_hint;      // e.g. "press Ctrl+C again to force"; empty: none
};

std::vector<std::string> RenderFrame(const TreeSnapshot& tree, double now, const FrameOptions& options);

// The header's description of the build: "SIMULATED build of large-transformer (seed 1,
// speed 4x)" or "tensorrt build of model.onnx". Also printed above the final summary.
std::string DescribeBuild(const TreeSnapshot& tree);

// Columns `text` takes on a terminal: UTF-8 aware (wide East Asian and emoji take 2,
// combining marks 0), ANSI escape sequences take none.
size_t DisplayWidth(std::string_view text);

// `text` (no escapes) shortened to at most `width` columns by cutting its middle:
// "Finding fastest tactic for node 12" -> "Finding fas…for node 12".
std::string ElideMiddle(std::string_view text, size_t width, bool unicode = true);

// `text` cut at `width` columns without splitting an escape sequence or a UTF-8
// character; appends an SGR reset if it cut inside coloured text.
std::string TruncateToWidth(std::string_view text, size_t width);

// Control characters replaced by '?': names come from the builder, and an escape byte
// in one must not reach the terminal as a command.
std::string Printable(std::string_view text);

// "42 s" for the activity line (whole seconds, so it changes once a second).
std::string WholeSeconds(double seconds);

}  // namespace trtwatch
