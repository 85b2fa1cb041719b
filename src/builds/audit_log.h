// AuditLog: writes the audit trail (builds/audit_entry.h) after an action succeeded —
// a submit, a cancel, a model's upload or removal, a dashboard sign-in or sign-out.
// The action is done already when it is recorded, so a store that cannot take the
// entry never fails it: the failure is one line on stderr and one count in /metrics
// (trtwatch_audit_write_failures_total).
//
// The user is the caller's name; a service that asks for no credentials knows no name,
// and records "anonymous". Values longer than their bound are cut (a user, a target)
// or replaced (a detail over 4 KiB becomes {"cut": true}), never refused.
//
// Threading: as the store it writes to (builds/stores/record_store.h): one thread.
#pragma once

#include <string>
#include <string_view>

#include "builds/audit_entry.h"

namespace trtwatch {
class Clock;
}

namespace trtwatch::builds {

class Metrics;
class RecordStore;

// The user recorded for a caller without a name.
inline constexpr std::string_view kAnonymousUser = "anonymous";

class AuditLog {
 public:
  // `clock` dates the entries (its UnixSeconds); all three outlive the log.
  AuditLog(RecordStore& store, const Clock& clock, Metrics& metrics);

  // Records that `caller` did `action` to `target`, with `detail` (a JSON object as
  // text). Whether the entry was stored; a failure is reported as the header says.
  bool Record(std::string_view caller, std::string_view action, std::string_view target,
              std::string detail = "{}");
  // Record for the two actions every front end records alike: a submit that created
  // build or group `id` (its model, and a group's member count, from `record`, its
  // document) and a build's cancel that took (the reason and message of `record`'s
  // cancel).
  bool RecordSubmit(std::string_view caller, bool group, std::string_view id, std::string_view record);
  bool RecordCancel(std::string_view caller, std::string_view id, std::string_view record);

  // The entry Record would store (bounded, dated); pure apart from the clock.
  AuditEntry EntryOf(std::string_view caller, std::string_view action, std::string_view target,
                     std::string detail) const;

 private:
  RecordStore& store_;
  const Clock& clock_;
  Metrics& metrics_;
};

}  // namespace trtwatch::builds
