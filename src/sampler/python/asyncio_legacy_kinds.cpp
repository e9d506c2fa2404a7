#include "sampler/python/asyncio_legacy_kinds.hpp"

namespace dapprof::sampler::python {
namespace {

// A class hierarchy deeper than this between a task and _asyncio.Future is a misread.
constexpr int kMaxBases = 32;
constexpr std::size_t kMaxTypeName = 48;
// Guards the unordered_map against a target that makes up a new type per object.
constexpr std::size_t kMaxTypes = 4096;

}  // namespace

Result<ObjectKind> ObjectKinds::of(Address object) {
  auto type = objects_.type_of(object);
  if (!type) return type.error();
  return of_type(*type);
}

Result<ObjectKind> ObjectKinds::of_type(Address type) {
  if (auto it = kinds_.find(type); it != kinds_.end()) return it->second;
  if (!plausible(type)) return torn("implausible type address");
  const Layout& l = objects_.layout();
  ObjectKind kind = ObjectKind::Other;
  // A subclass of Task is a task, of Future a future: their C part is laid out alike.
  Address base = type;
  for (int depth = 0; base != 0 && depth < kMaxBases; ++depth) {
    if (base == task_type_) {
      kind = ObjectKind::Task;
      break;
    }
    if (base == future_type_) {
      kind = ObjectKind::Future;
      break;
    }
    auto next = objects_.memory().read<Address>(base + l.type_base);
    if (!next) return as_torn(next.error());
    base = *next;
  }
  if (kind == ObjectKind::Other) {
    auto name = type_name(type);
    if (!name) return name.error();
    if (*name == "function") kind = ObjectKind::Function;
    if (*name == "method") kind = ObjectKind::Method;
    if (*name == "functools.partial") kind = ObjectKind::Partial;
    if (*name == "NoneType") kind = ObjectKind::None;
  }
  if (kinds_.size() < kMaxTypes) kinds_.emplace(type, kind);
  return kind;
}

Result<std::string> ObjectKinds::type_name(Address type) const {
  return objects_.type_name(type, kMaxTypeName);
}

}  // namespace dapprof::sampler::python
