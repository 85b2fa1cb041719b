// A storage fault injector for tests: an SQLite VFS that wraps the default one and,
// once armed, fails every write (xWrite, xTruncate, xSync) with a chosen error, as a
// full disk (SQLITE_FULL, ENOSPC) or a failing one (SQLITE_IOERR_WRITE, EIO) does.
// Reads keep working. Heal() makes writes succeed again ("space returns").
//
// Usage: FaultySqliteVfs vfs;  SqliteStore::Open(dir, &error, vfs.name());
//        vfs.FailWritesAfter(3, SQLITE_FULL);  ...  vfs.Heal();
// Threading: the counters are atomics; SQLite may call from any thread.
#pragma once

#include <sqlite3.h>

#include <atomic>
#include <cstring>

namespace trtwatch::testing {

class FaultySqliteVfs {
 public:
  explicit FaultySqliteVfs(const char* name = "trtwatch-faulty") {
    base_ = sqlite3_vfs_find(nullptr);
    vfs_ = *base_;
    vfs_.zName = name;
    vfs_.szOsFile = static_cast<int>(sizeof(File)) + base_->szOsFile;
    vfs_.pAppData = this;
    vfs_.xOpen = &Open;
    sqlite3_vfs_register(&vfs_, /*makeDflt=*/0);
  }
  ~FaultySqliteVfs() { sqlite3_vfs_unregister(&vfs_); }
  FaultySqliteVfs(const FaultySqliteVfs&) = delete;
  FaultySqliteVfs& operator=(const FaultySqliteVfs&) = delete;

  const char* name() const { return vfs_.zName; }
  // Lets `writes` more writes through, then fails each with `error`.
  void FailWritesAfter(int writes, int error) {
    error_.store(error);
    allowed_.store(writes);
    armed_.store(true);
  }
  void Heal() { armed_.store(false); }
  int failed_writes() const { return failed_.load(); }

 private:
  struct File {
    sqlite3_file base;  // must come first: SQLite sees a File as an sqlite3_file
    FaultySqliteVfs* owner;
    sqlite3_file* real;  // the wrapped file, stored right after this struct
    sqlite3_io_methods methods;
  };

  // Whether the next write fails, and with what.
  int NextWrite() {
    if (!armed_.load()) return SQLITE_OK;
    if (allowed_.fetch_sub(1) > 0) return SQLITE_OK;
    failed_.fetch_add(1);
    return error_.load();
  }

  static File* Self(sqlite3_file* f) { return reinterpret_cast<File*>(f); }

  static int Open(sqlite3_vfs* vfs, const char* name, sqlite3_file* file, int open_flags, int* out_flags) {
    auto* self = static_cast<FaultySqliteVfs*>(vfs->pAppData);
    File* f = Self(file);
    std::memset(f, 0, sizeof(File));
    f->owner = self;
    f->real = reinterpret_cast<sqlite3_file*>(reinterpret_cast<char*>(f) + sizeof(File));
    const int open_rc = self->base_->xOpen(self->base_, name, f->real, open_flags, out_flags);
    if (open_rc != SQLITE_OK || !f->real->pMethods) {
      f->base.pMethods = nullptr;
      return open_rc;
    }
    f->methods = *f->real->pMethods;  // every call forwards to the real file ...
    f->methods.xClose = [](sqlite3_file* p) { return Self(p)->real->pMethods->xClose(Self(p)->real); };
    f->methods.xRead = [](sqlite3_file* p, void* buf, int n, sqlite3_int64 off) {
      return Self(p)->real->pMethods->xRead(Self(p)->real, buf, n, off);
    };
    // ... except that writes may fail.
    f->methods.xWrite = [](sqlite3_file* p, const void* buf, int n, sqlite3_int64 off) {
      if (int rc = Self(p)->owner->NextWrite()) return rc;
      return Self(p)->real->pMethods->xWrite(Self(p)->real, buf, n, off);
    };
    f->methods.xTruncate = [](sqlite3_file* p, sqlite3_int64 size) {
      if (int rc = Self(p)->owner->NextWrite()) return rc;
      return Self(p)->real->pMethods->xTruncate(Self(p)->real, size);
    };
    f->methods.xSync = [](sqlite3_file* p, int flags) {
      if (int rc = Self(p)->owner->NextWrite()) return rc;
      return Self(p)->real->pMethods->xSync(Self(p)->real, flags);
    };
    f->methods.xFileSize = [](sqlite3_file* p, sqlite3_int64* size) {
      return Self(p)->real->pMethods->xFileSize(Self(p)->real, size);
    };
    f->methods.xLock = [](sqlite3_file* p, int l) { return Self(p)->real->pMethods->xLock(Self(p)->real, l); };
    f->methods.xUnlock = [](sqlite3_file* p, int l) { return Self(p)->real->pMethods->xUnlock(Self(p)->real, l); };
    f->methods.xCheckReservedLock = [](sqlite3_file* p, int* r) {
      return Self(p)->real->pMethods->xCheckReservedLock(Self(p)->real, r);
    };
    f->methods.xFileControl = [](sqlite3_file* p, int op, void* arg) {
      return Self(p)->real->pMethods->xFileControl(Self(p)->real, op, arg);
    };
    f->methods.xSectorSize = [](sqlite3_file* p) { return Self(p)->real->pMethods->xSectorSize(Self(p)->real); };
    f->methods.xDeviceCharacteristics = [](sqlite3_file* p) {
      return Self(p)->real->pMethods->xDeviceCharacteristics(Self(p)->real);
    };
    f->methods.xShmMap = [](sqlite3_file* p, int pg, int sz, int extend, void volatile** out) {
      return Self(p)->real->pMethods->xShmMap(Self(p)->real, pg, sz, extend, out);
    };
    f->methods.xShmLock = [](sqlite3_file* p, int off, int n, int flags) {
      return Self(p)->real->pMethods->xShmLock(Self(p)->real, off, n, flags);
    };
    f->methods.xShmBarrier = [](sqlite3_file* p) { Self(p)->real->pMethods->xShmBarrier(Self(p)->real); };
    f->methods.xShmUnmap = [](sqlite3_file* p, int del) {
      return Self(p)->real->pMethods->xShmUnmap(Self(p)->real, del);
    };
    f->methods.xFetch = [](sqlite3_file* p, sqlite3_int64 off, int n, void** out) {
      return Self(p)->real->pMethods->xFetch(Self(p)->real, off, n, out);
    };
    f->methods.xUnfetch = [](sqlite3_file* p, sqlite3_int64 off, void* ptr) {
      return Self(p)->real->pMethods->xUnfetch(Self(p)->real, off, ptr);
    };
    f->base.pMethods = &f->methods;
    return SQLITE_OK;
  }

  sqlite3_vfs* base_;
  sqlite3_vfs vfs_;
  std::atomic<bool> armed_{false};
  std::atomic<int> allowed_{0};
  std::atomic<int> error_{SQLITE_FULL};
  std::atomic<int> failed_{0};
};

}  // namespace trtwatch::testing
