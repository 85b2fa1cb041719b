#include "core/event.h"

#include <array>

#include "core/enum_names.h"

namespace trtwatch {

namespace {

constexpr std::array<std::string_view, 9> kTypeNames = {
    "build_start", "phase_start", "step",         "phase_finish", "cancel_requested",
    "stall",       "log",         "build_finish", "estimate"};

constexpr std::array<std::string_view, 5> kSeverityNames = {"internal_error", "error", "warning",
                                                            "info", "verbose"};

}  // namespace

std::string_view EventTypeName(EventType type) { return kTypeNames[static_cast<size_t>(type)]; }
bool ParseEventType(std::string_view name, EventType* type) {
  return ParseEnumName(kTypeNames, name, type);
}

std::string_view SeverityName(Severity severity) {
  return kSeverityNames[static_cast<size_t>(severity)];
}
bool ParseSeverity(std::string_view name, Severity* severity) {
  return ParseEnumName(kSeverityNames, name, severity);
}

}  // namespace trtwatch
