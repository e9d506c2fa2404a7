#pragma once
// The local variables of a Python frame (`dapprof dump --locals`), read from the frame's fast
// locals and named by its code object: co_varnames, co_cellvars and co_freevars (3.8-3.10) or
// co_localsplusnames and their kinds (3.11+). Values are described from their bytes (numbers,
// short strings, container lengths), never repr()'d: nothing runs in the program.
#include <string>
#include <unordered_map>
#include <vector>

#include "common/result.hpp"
#include "model/local_variable.hpp"
#include "sampler/python/objects.hpp"

namespace dapprof::sampler::python {

class LocalsReader {
 public:
  explicit LocalsReader(const Objects& objects) : objects_(objects) {}

  // The bound variables of the frame at `frame` that runs `code`, in the code object's order
  // (arguments first). A variable not yet (or no longer) bound is left out.
  Result<std::vector<model::LocalVariable>> read(Address frame, Address code) const;
  // What the value at `object` is, in a few words; a value that cannot be read says so.
  std::string describe(Address object) const;

 private:
  struct Slot {
    std::size_t index;  // in the frame's localsplus
    std::string name;
    bool cell;  // holds a cell object (a variable closures share)
  };
  Result<std::vector<Slot>> slots(Address code, std::size_t& arguments) const;
  Result<std::vector<Address>> tuple_items(Address tuple) const;
  Result<std::string> type_name(Address type) const;
  std::string describe_int(Address object, bool as_bool) const;

  const Objects& objects_;
  mutable std::unordered_map<Address, std::string> type_names_;
};

}  // namespace dapprof::sampler::python
