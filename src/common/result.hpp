#pragma once
// Errors as values: a Result<T> holds either a value or an Error whose message a user can act on.
#include <string>
#include <utility>
#include <variant>

namespace dapprof {

// What went wrong, for callers that react differently (a process that exited ends sampling
// cleanly; a torn read is counted, not fatal).
enum class ErrorCode {
  Generic,
  InvalidArgument,
  NoSuchProcess,     // the PID does not exist
  ProcessExited,     // it existed but is gone now
  PermissionDenied,  // ptrace / process_vm_readv refused
  NotPython,         // no CPython interpreter found in the process
  UnsupportedVersion,
  TornRead,  // inconsistent data read from a running process (nonblocking mode)
  OutputFailed,  // a file the user asked for could not be written
};

struct Error {
  std::string message;
  ErrorCode code = ErrorCode::Generic;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const { return std::get<1>(v_); }
  const std::string& message() const { return error().message; }
  ErrorCode code() const { return error().code; }

 private:
  std::variant<T, Error> v_;
};

// For operations that return nothing but may fail.
struct Ok {};
using Status = Result<Ok>;

}  // namespace dapprof
