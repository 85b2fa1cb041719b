// The record stores' test fixtures, shared by the suites typed over both stores
// (record_store_test.cc, audit_store_test.cc): each fixture says how to open its store
// on a test's own location, break and heal its writes, and read or set its schema
// version. PostgreSQL: one server for the whole test binary (started on first use),
// a fresh database per test; without PostgreSQL its tests skip.
//
// Threading: a test's thread.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "builds/stores/postgres_store.h"
#include "builds/stores/record_store.h"
#include "builds/stores/sqlite_store.h"
#include "support/faulty_sqlite_vfs.h"
#include "support/postgres_server.h"

namespace trtwatch::builds::store_fixtures {

constexpr int kCurrentSchema = 5;  // 1: the first release; 2: replicas (the queue's columns); 3: the history;
                                   // 4: fencing (lease generations, the log's end); 5: the audit trail

// Moves a successful result's value into `*out`; false when the call failed.
template <typename T>
bool Into(Result<T> read, T* out) {
  if (!read.ok()) return false;
  *out = std::move(read).value();
  return true;
}

// Whether the store answers a probe within `limit` (a lost PostgreSQL is retried with
// back-off): ok, or the last probe's error.
inline Status ProbeWithin(RecordStore& store, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (Status probe = store.Probe(); !probe.ok(); probe = store.Probe()) {
    if (std::chrono::steady_clock::now() > deadline) return probe;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return OkStatus();
}

// SQLite in the test's folder, through a VFS that can fail every write (a full disk).
class SqliteFixture {
 public:
  static constexpr const char* kName = "Sqlite";
  std::string SetUp(const std::string& dir) {
    dir_ = dir;
    return "";
  }
  StoreOpening Open() { return SqliteStore::Open(dir_, vfs_.name()); }
  void BreakWrites() { vfs_.FailWritesAfter(0, SQLITE_FULL); }
  void HealWrites() { vfs_.Heal(); }
  int SchemaVersion() { return static_cast<int>(Pragma("PRAGMA user_version")); }
  void SetSchemaVersion(int v) { Pragma(("PRAGMA user_version = " + std::to_string(v)).c_str()); }
  std::string Location() const { return "the data dir \"" + dir_ + "\""; }
  // Back to schema step 4's tables (the migration test of step 5).
  void DropAuditTable() { Pragma("DROP TABLE audit"); }

 private:
  int64_t Pragma(const char* sql) {
    sqlite3* db = nullptr;
    int64_t value = -1;
    sqlite3_stmt* s = nullptr;
    if (sqlite3_open((dir_ + "/trtwatch.db").c_str(), &db) == SQLITE_OK &&
        sqlite3_prepare_v2(db, sql, -1, &s, nullptr) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW) {
      value = sqlite3_column_int64(s, 0);
    }
    sqlite3_finalize(s);
    sqlite3_close(db);
    return value;
  }
  testing::FaultySqliteVfs vfs_;
  std::string dir_;
};

// One PostgreSQL server for the whole run (started on first use, stopped at exit), a
// fresh database per test; "breaking writes" stops the server, as a crash would.
class PostgresFixture {
 public:
  static constexpr const char* kName = "Postgres";
  static testing::PostgresServer* Server(std::string* why) {
    static std::string skip;
    static const std::unique_ptr<testing::PostgresServer> server = [] {
      const auto start = std::chrono::steady_clock::now();
      auto s = testing::PostgresServer::Start(&skip);
      std::fprintf(stderr, "[postgres fixture started in %.2f s]\n",
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      return s;
    }();
    *why = skip;
    return server.get();
  }
  std::string SetUp(const std::string&) {
    std::string why;
    server_ = Server(&why);
    if (!server_) return "PostgreSQL tests skipped: " + why;
    static int databases = 0;
    db_ = "store_test_" + std::to_string(++databases);
    const std::string error = server_->CreateDatabase(db_);
    return error.empty() ? "" : "cannot create a database: " + error;
  }
  StoreOpening Open() { return PostgresStore::Open(server_->Uri(db_)); }
  void BreakWrites() { ASSERT_TRUE(server_->Stop()); }
  void HealWrites() {
    std::string why;
    ASSERT_TRUE(server_->Restart(&why)) << why;
  }
  int SchemaVersion() {
    // Exec returns errors only: a version that is not the current one makes the check fail.
    return server_->Exec(db_, "DO $$ BEGIN IF (SELECT version FROM trtwatch_schema) <> " +
                                  std::to_string(kCurrentSchema) + " THEN RAISE 'v'; END IF; END $$")
                   .empty()
               ? kCurrentSchema
               : -1;
  }
  void SetSchemaVersion(int v) {
    ASSERT_EQ(server_->Exec(db_, "UPDATE trtwatch_schema SET version = " + std::to_string(v)), "");
  }
  std::string Location() const { return "the database \"" + db_ + "\" on 127.0.0.1:" + std::to_string(server_->port()); }
  void DropAuditTable() { ASSERT_EQ(server_->Exec(db_, "DROP TABLE audit"), ""); }
  testing::PostgresServer& server() { return *server_; }
  const std::string& db() const { return db_; }

 private:
  testing::PostgresServer* server_ = nullptr;
  std::string db_;
};

template <class Fixture>
class StoreBehaviourTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/trtwatch_store_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    if (const std::string skip = store_.SetUp(dir_); !skip.empty()) GTEST_SKIP() << skip;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::unique_ptr<RecordStore> Open() {
    StoreOpening opened = store_.Open();
    EXPECT_EQ(opened.outcome, StoreOpening::Outcome::kOpened) << opened.error;
    return std::move(opened.store);
  }
  Fixture store_;
  std::string dir_;
};

struct StoreName {
  template <class T>
  static std::string GetName(int) {
    return T::kName;
  }
};
using Stores = ::testing::Types<SqliteFixture, PostgresFixture>;

}  // namespace trtwatch::builds::store_fixtures
