// The error for a command line that names no command trtwatch knows: CLI11 alone says
// "A subcommand is required" or that an argument was not expected, without naming
// the word it did not know. Checked only once parsing failed.
//
// Threading: pure functions over the parsed app.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace trtwatch {

// For `trtwatch frob` or `trtwatch cache frob`: "unknown command \"frob\"; the commands
// of trtwatch cache are ls, stats, ... (trtwatch cache --help)". Empty when every word
// in a command's place names one (the parse failed for another reason). `args` are the
// arguments after the program's name.
[[nodiscard]] std::string UnknownCommandError(const CLI::App& app, const std::vector<std::string>& args);

}  // namespace trtwatch
