// A throwaway PostgreSQL server for tests: initdb into a fresh temporary folder, started
// on a free port of 127.0.0.1 (its unix socket in the same folder), fsync off; stopped
// (immediate) and removed when destroyed. About a second to start.
//
// initdb refuses root: when the tests run as root, the server runs as `postgres`
// (runuser) and the folder is given to that user. The binaries are looked for in
// $TRTWATCH_PG_BIN, else the newest /usr/lib/postgresql/*/bin.
//
// Usage: std::string why;  auto pg = PostgresServer::Start(&why);  if (!pg) GTEST_SKIP() << why;
//        pg->CreateDatabase("t1");  store on pg->Uri("t1");  pg->Stop();  pg->Restart();
// Threading: one thread.
#pragma once

#include <arpa/inet.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

namespace trtwatch::testing {

class PostgresServer {
 public:
  // A started server, or null with `*why` (no binaries, no `postgres` user, a failed start).
  static std::unique_ptr<PostgresServer> Start(std::string* why) {
    const std::string bin = FindBin();
    if (bin.empty()) return *why = "no PostgreSQL server binaries (apt-get install postgresql-15)", nullptr;
    std::unique_ptr<PostgresServer> pg(new PostgresServer(bin));
    if (!pg->MakeFolder(why) || !pg->InitDb(why)) return nullptr;
    // A port found free may be taken by another test before the server binds it: the
    // first start tries another one.
    for (int attempt = 0; attempt < 3; ++attempt, pg->port_ = FreePort()) {
      if (pg->Restart(why)) return pg;
    }
    return nullptr;
  }
  ~PostgresServer() {
    Stop();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  std::string Uri(const std::string& db) const {
    return "postgresql://postgres@127.0.0.1:" + std::to_string(port_) + "/" + db;
  }
  int port() const { return port_; }

  // Stops the server at once, as a crash would (pg_ctl stop -m immediate).
  bool Stop() { return Run("pg_ctl -D " + dir_ + "/data -m immediate -s stop") == 0; }
  // Starts it (again) on the same port; false with `*why`, the server's log.
  bool Restart(std::string* why = nullptr) {
    const std::string options = "-c listen_addresses=127.0.0.1 -p " + std::to_string(port_) + " -k " + dir_ +
                                " -c fsync=off -c full_page_writes=off";
    if (Run("pg_ctl -D " + dir_ + "/data -l " + dir_ + "/pg.log -w -s -o '" + options + "' start") == 0) return true;
    if (why) *why = "the PostgreSQL server did not start; its log: " + Slurp(dir_ + "/pg.log");
    return false;
  }

  // Runs `sql` (no values) in database `db`; empty, or the error.
  std::string Exec(const std::string& db, const std::string& sql) const {
    PGconn* conn = PQconnectdb(Uri(db).c_str());
    std::string error;
    if (PQstatus(conn) != CONNECTION_OK) {
      error = PQerrorMessage(conn);
    } else {
      PGresult* r = PQexec(conn, sql.c_str());
      if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK) error = PQresultErrorMessage(r);
      PQclear(r);
    }
    PQfinish(conn);
    return error;
  }
  std::string CreateDatabase(const std::string& name) const { return Exec("postgres", "CREATE DATABASE " + name); }

 private:
  explicit PostgresServer(std::string bin) : bin_(std::move(bin)), port_(FreePort()) {}

  static std::string FindBin() {
    if (const char* env = std::getenv("TRTWATCH_PG_BIN"); env && *env) return env;
    std::string best;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/usr/lib/postgresql", ec)) {
      const std::string bin = e.path().string() + "/bin";
      if (std::filesystem::exists(bin + "/initdb") && std::filesystem::exists(bin + "/pg_ctl") && bin > best) best = bin;
    }
    return best;
  }
  static int FreePort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    int port = 0;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
      port = ntohs(a.sin_port);
    }
    ::close(fd);
    return port;
  }
  static std::string Slurp(const std::string& path) {
    std::string text;
    if (FILE* f = std::fopen(path.c_str(), "r")) {
      char buf[4096];
      for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
      std::fclose(f);
    }
    return text;
  }
  bool MakeFolder(std::string* why) {
    char pattern[] = "/tmp/trtwatch-pg-XXXXXX";
    if (!::mkdtemp(pattern)) return *why = "mkdtemp failed", false;
    dir_ = pattern;
    if (::geteuid() != 0) return true;
    const passwd* pw = ::getpwnam("postgres");
    if (!pw) return *why = "running as root and there is no `postgres` user to run the server", false;
    if (::chown(dir_.c_str(), pw->pw_uid, pw->pw_gid) != 0) return *why = "cannot chown " + dir_, false;
    as_postgres_ = true;
    return true;
  }
  bool InitDb(std::string* why) {
    if (Run("initdb -D " + dir_ + "/data -U postgres -A trust -E UTF8 --locale=C.UTF-8 --no-sync --no-instructions") == 0) {
      return true;
    }
    *why = "initdb failed: " + Slurp(dir_ + "/cmd.log");
    return false;
  }
  // A server binary, as `postgres` when the tests run as root; its output to cmd.log.
  int Run(const std::string& command) const {
    const std::string line = (as_postgres_ ? "runuser -u postgres -- " : "") + bin_ + "/" + command;
    return std::system((line + " >" + dir_ + "/cmd.log 2>&1").c_str());
  }

  std::string bin_;
  int port_;
  std::string dir_;
  bool as_postgres_ = false;
};

}  // namespace trtwatch::testing
