#pragma once
// The exception a thread is handling (sampling mode "exception"), read from its thread state as
// sys.exception() finds it: the innermost item of the thread's stack of handled exceptions
// (tstate->exc_info, one item per running generator or coroutine, the thread's own at the
// bottom) that holds one; an item holding nothing or None is skipped for the one it shadows.
// 3.11+ keep the exception in each item, 3.7-3.10 its type, value and traceback.
#include <string>
#include <unordered_map>

#include "common/result.hpp"
#include "sampler/python/objects.hpp"

namespace dapprof::sampler::python {

class HandledExceptions {
 public:
  explicit HandledExceptions(const Objects& objects) : objects_(objects) {}

  // Whether the layout has what of() reads.
  static bool readable(const Layout& layout);
  // The type name (tp_name) of the exception the thread whose state is at `tstate` is handling;
  // "" when it handles none.
  Result<std::string> of(Address tstate);

 private:
  Result<std::string> type_name(Address type);

  const Objects& objects_;
  std::unordered_map<Address, std::string> names_;  // tp_name by type address
};

}  // namespace dapprof::sampler::python
