#pragma once
// What kind of object an address holds, as the 3.8-3.13 asyncio reader needs to tell them apart:
// tasks and futures (the C _asyncio types or their subclasses), and the few callables and
// containers a future's done-callbacks are made of. Decided from the object's type, once per type
// (a program has a handful of them, its tasks thousands).
#include <string>
#include <unordered_map>

#include "common/result.hpp"
#include "sampler/python/objects.hpp"

namespace dapprof::sampler::python {

enum class ObjectKind { Task, Future, Function, Method, Partial, None, Other };

class ObjectKinds {
 public:
  ObjectKinds(const Objects& objects, Address task_type, Address future_type)
      : objects_(objects), task_type_(task_type), future_type_(future_type) {}

  // TornRead if the object or its type cannot be read.
  Result<ObjectKind> of(Address object);
  // The same from the object's type, read by the caller.
  Result<ObjectKind> of_type(Address type);

 private:
  Result<std::string> type_name(Address type) const;

  const Objects& objects_;
  Address task_type_;
  Address future_type_;
  std::unordered_map<Address, ObjectKind> kinds_;
};

}  // namespace dapprof::sampler::python
