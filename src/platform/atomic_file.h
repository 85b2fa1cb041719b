// AtomicFile: a file that appears at its final path complete or not at all.
//
// The bytes go to a temporary file in the target's own folder (so the final rename
// stays on one file system and is atomic); Commit() flushes them to disk, renames the
// temporary file over the target and flushes the folder. Anything short of a
// successful Commit() (an error, a full disk, a cancelled build, an exception, the
// object going away) removes the temporary file and leaves the target untouched.
// A process killed outright (SIGKILL, power loss) can leave a temporary file named
// ".NAME.trtwatch-XXXXXXXX" behind, never a partial NAME (RemoveAbandonedTempFiles
// clears them). A large file is handed to the
// disk while it is written (Linux: every 8 MiB), so Commit's flush waits for its last
// few MiB instead of the whole file (an uploaded model, an engine: seconds per GiB).
//
// Threading: one AtomicFile is used by one thread at a time; distinct objects are
// independent. Platform implementation: platform/posix/atomic_file.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace trtwatch {

// What AtomicFile::CopyPieces did.
struct CopiedPieces {
  bool ok = false;
  bool declined = false;  // kernel_only, and the kernel cannot copy these files: nothing appended
  uint64_t bytes = 0;  // appended
  std::string error;   // not ok: why, naming the files (the AtomicFile is then unusable)
};

class AtomicFile {
 public:
  // The bytes CopyPieces copies at a time: large enough that a GiB is 128 calls, small
  // enough that reading a piece back (while the next is copied) finds it in the page cache.
  static constexpr uint64_t kCopyPiece = uint64_t{8} << 20;

  // Creates the temporary file next to `target`. On failure returns null and says why
  // in `*error`, naming the folder.
  static std::unique_ptr<AtomicFile> Create(const std::string& target, std::string* error);
  ~AtomicFile();  // removes the temporary file unless committed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Appends `size` bytes. After a failure the file is unusable; the destructor cleans up.
  bool Write(const void* data, size_t size, std::string* error);
  // Makes the (still empty) file share `source`'s blocks: a reflink (copy on write),
  // where the file system has them (Linux FICLONE: Btrfs, XFS, bcachefs). False, with
  // nothing written, where it cannot.
  bool ShareFrom(const std::string& source);
  // Makes the (still empty) file a hard link to `source` instead, where the file
  // system allows (the same one, links supported). False, with the file unchanged and
  // still usable, where it cannot. Commit then puts the link at the target.
  bool LinkFrom(const std::string& source);
  // Appends `source`'s bytes, copied by the kernel where it can (copy_file_range).
  // After a failure the file is unusable.
  bool CopyFrom(const std::string& source, std::string* error);
  // The same, kCopyPiece at a time, calling `copied` (when set) after each piece with the
  // bytes the file holds so far: they can be read back at temp_path() from then on (the
  // engine cache checks the bytes it placed while the rest is copied). The disk is
  // handed each piece as it is written, so Commit's flush waits for the last few.
  // `kernel_only`: where the kernel cannot copy them (another file system, an older
  // kernel, Windows), nothing is appended and `declined` is set; the file stays usable.
  [[nodiscard]] CopiedPieces CopyPieces(const std::string& source, const std::function<void(uint64_t)>& copied,
                                        bool kernel_only = false);
  // fsync, close, rename over the target, fsync the folder. Once only.
  bool Commit(std::string* error);
  // Commit, except that a target already there is kept: the first of several writers
  // wins (POSIX: link(2), which refuses an existing name; Windows: a move without
  // replace). False, with the temporary file removed, where the target existed or
  // anything failed. Once only, instead of Commit.
  [[nodiscard]] bool CommitIfAbsent();

  const std::string& target() const { return target_; }
  const std::string& temp_path() const { return temp_path_; }
  // Whether the last failure was the disk (or the user's quota) being full: ENOSPC or
  // EDQUOT from a write or the flush (Windows: ENOSPC).
  bool out_of_space() const { return out_of_space_; }

 private:
  AtomicFile(std::string target, std::string temp_path, int fd);
  void Discard() noexcept;
  bool FlushAndClose(std::string* error);  // Commit's first half: the data on disk
  void StartWriteback();  // of what was written since the last call, once it is 8 MiB

  const std::string target_;
  const std::string temp_path_;
  int fd_;
  bool committed_ = false;
  bool linked_ = false;             // the temporary name is a hard link (LinkFrom)
  bool out_of_space_ = false;       // a write or the flush found the disk full
  uint64_t written_ = 0;           // bytes written so far
  uint64_t writeback_started_ = 0;  // bytes handed to the disk by StartWriteback
};

// Removes the temporary files of AtomicFiles in `folder` that no process writes any
// more: those left by a process killed outright (see above). A temporary file is
// locked while its AtomicFile lives (POSIX: flock, which NFS carries across hosts;
// Windows: an open file cannot be deleted), so one that another live process (or this
// one) writes is kept. Returns how many were removed.
int RemoveAbandonedTempFiles(const std::string& folder);

// Writes `data` to `target` through an AtomicFile.
bool WriteFileAtomically(const std::string& target, std::string_view data, std::string* error);

// Reads a whole file. Returns false with the reason in `*error`, and the errno value
// in `*error_number` if given (ENOENT: no such file).
bool ReadWholeFile(const std::string& path, std::string* data, std::string* error, int* error_number = nullptr);

}  // namespace trtwatch
