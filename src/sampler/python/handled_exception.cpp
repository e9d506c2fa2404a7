#include "sampler/python/handled_exception.hpp"

namespace dapprof::sampler::python {
namespace {

// Generators nest as deep as the stack does; an item list longer than this is a torn read.
constexpr int kMaxItems = 1024;
constexpr std::size_t kMaxTypeName = 200;
// Exception classes are few; a program that makes classes at run time must not grow the cache.
constexpr std::size_t kMaxCachedTypes = 4096;

}  // namespace

bool HandledExceptions::readable(const Layout& l) {
  return l.tstate_exc_info != kAbsent && l.errstack_previous != kAbsent &&
         (l.at_least(3, 11) ? l.errstack_exc_value != kAbsent : l.errstack_exc_type != kAbsent);
}

Result<std::string> HandledExceptions::of(Address tstate) {
  const Layout& l = objects_.layout();
  const auto& mem = objects_.memory();
  // Before 3.11 an item holds the type itself; from 3.11 the exception, whose type is named.
  const bool holds_type = !l.at_least(3, 11);
  auto item = mem.read_pointer(tstate + l.tstate_exc_info);
  if (!item) return as_torn(item.error());
  for (int n = 0; *item != 0; ++n) {
    if (n == kMaxItems || !plausible(*item)) return torn("implausible exception stack");
    auto held = mem.read_pointer(*item + (holds_type ? l.errstack_exc_type : l.errstack_exc_value));
    if (!held) return as_torn(held.error());
    if (*held != 0) {
      if (!plausible(*held)) return torn("implausible exception address");
      auto type = objects_.type_of(*held);
      if (!type) return type.error();
      auto name = type_name(*type);
      if (!name) return name.error();
      if (*name != "NoneType") return holds_type ? type_name(*held) : name;
    }
    item = mem.read_pointer(*item + l.errstack_previous);
    if (!item) return as_torn(item.error());
  }
  return std::string{};
}

Result<std::string> HandledExceptions::type_name(Address type) {
  if (auto it = names_.find(type); it != names_.end()) return it->second;
  auto name = objects_.type_name(type, kMaxTypeName);
  if (!name) return name.error();
  if (names_.size() >= kMaxCachedTypes) names_.clear();
  names_.emplace(type, *name);
  return name;
}

}  // namespace dapprof::sampler::python
