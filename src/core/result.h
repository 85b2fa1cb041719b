// Status and Result<T>: the one error style of new and touched code (docs/architecture.md,
// "Errors"). A Status is ok or an error text that names the problem and the fix; a
// Result<T> is a T or such a Status. Both are [[nodiscard]]: a failure is handled or
// passed on, never dropped. Modelled on absl::Status / absl::StatusOr, smaller: no codes,
// since callers here branch on the operation's own outcome enums where they need to.
//
// Threading: values; no shared state.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace trtwatch {

class [[nodiscard]] Status {
 public:
  Status() = default;  // ok
  static Status Error(std::string message) { return Status(std::move(message)); }

  bool ok() const { return !error_.has_value(); }
  // The error text; empty when ok.
  const std::string& error() const {
    static const std::string kNone;
    return error_ ? *error_ : kNone;
  }

 private:
  explicit Status(std::string message) : error_(std::move(message)) {}
  std::optional<std::string> error_;
};

inline Status OkStatus() { return Status(); }

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: a value is a successful result
  Result(Status status) : status_(std::move(status)) {  // NOLINT: so is passing a failure on
    if (status_.ok()) status_ = Status::Error("a Result was made from an ok Status without a value");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  const std::string& error() const { return status_.error(); }
  // The value; only when ok().
  const T& value() const& { return *value_; }
  T& value() & { return *value_; }
  // By value from a temporary, so `for (auto& x : Read().value())` keeps what it loops over.
  T value() && { return std::move(*value_); }
  const T& operator*() const& { return *value_; }
  const T* operator->() const { return &*value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace trtwatch
