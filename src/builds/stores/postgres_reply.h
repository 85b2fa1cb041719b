// PgReply: a libpq query's result, or libpq's error when it has none. Shared by the
// files of PostgresStore's implementation.
//
// Threading: a value; read it on the thread that ran the query.
#pragma once

#include <libpq-fe.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

namespace trtwatch::builds {

// A query's result, or libpq's error (bounded, valid UTF-8) when it has none.
struct PgReply {
  std::unique_ptr<PGresult, decltype(&PQclear)> result{nullptr, &PQclear};
  std::string error;

  bool ok() const { return result != nullptr; }
  int rows() const { return PQntuples(result.get()); }
  std::string Text(int row, int col) const {
    return std::string(PQgetvalue(result.get(), row, col), static_cast<size_t>(PQgetlength(result.get(), row, col)));
  }
  int64_t Int(int row, int col) const { return std::strtoll(PQgetvalue(result.get(), row, col), nullptr, 10); }
};

}  // namespace trtwatch::builds
