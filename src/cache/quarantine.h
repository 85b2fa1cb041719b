// The engine cache's quarantine: a damaged entry is moved aside, whole, to
// DIR/v1/quarantine/<key>-<UTC time>/ with a file `why` saying what was wrong, instead
// of being removed: the evidence stays for a person to look at (`trtwatch cache ls`
// lists it; deleting its folder clears it). Entries' engines are
// read-only (0444): RemoveEntryFolder makes them writable first where the OS needs it.
//
// Threading: pure functions over the shared folder; hold the key's lock around
// QuarantineEntry (as Find and Place do).
#pragma once

#include <string>
#include <vector>

namespace trtwatch::cache {

struct Quarantined {
  std::string name;    // <key>-<time>: the folder under DIR/v1/quarantine/
  std::string key;     // the entry's key
  std::string reason;  // what was wrong
  double when_unix = 0;
};

struct QuarantineOutcome {
  std::string path;   // where the entry went; empty when it could not be moved (then removed)
  std::string error;  // why it could not be moved
};

// Moves the entry folder `entry` (DIR/v1/<key>) to the quarantine of `root` (DIR/v1),
// recording `reason`; an entry that cannot be moved is removed, so it is never reused.
[[nodiscard]] QuarantineOutcome QuarantineEntry(const std::string& root, const std::string& key,
                                                const std::string& reason);
// The quarantined entries, newest first.
std::vector<Quarantined> ListQuarantine(const std::string& root);
// Removes an entry's folder (read-only files included); true when it is gone.
bool RemoveEntryFolder(const std::string& path);
// Makes a stored engine read-only: a slip of a tool cannot write it in place.
void MakeReadOnly(const std::string& path);

}  // namespace trtwatch::cache
