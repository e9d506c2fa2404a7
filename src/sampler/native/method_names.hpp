#pragma once
// Names for the C functions of builtins in a stripped interpreter, from CPython's own tables:
// every builtin function and method is a PyMethodDef {ml_name, ml_meth, ml_flags, ml_doc}
// whose ml_meth is the C function called, listed in its type's tp_methods (list.sort) or its
// module's PyModuleDef m_methods (time.sleep). Those tables are found in the target's memory,
// in the data of the interpreter and its extension modules, whatever the version: a static
// type is a PyTypeObject whose ob_type is &PyType_Type (an exported symbol), a module
// definition a PyModuleDef whose ob_type is &PyModuleDef_Type once imported (NULL before), each
// pointing to a table of well-formed entries. A frame is named only where its function starts
// exactly at an ml_meth: the functions after one in memory are as often another's helpers
// (Argument Clinic puts every wrapper of a file together, a PGO build reorders them).
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "sampler/process/maps.hpp"

namespace dapprof::sampler::native {

// A copy of target memory: regions of bytes at their addresses.
struct MemoryImage {
  struct Region {
    std::uint64_t start = 0;
    std::vector<std::byte> bytes;
  };
  std::vector<Region> regions;  // by start
  struct Range {
    std::uint64_t start = 0, end = 0;
  };
  std::vector<Range> code;  // executable mappings: where an ml_meth may point

  const std::byte* at(std::uint64_t address, std::size_t size) const;
  bool in_code(std::uint64_t address) const;
};

// Whether the file at `path` is a CPython extension module (lib-dynload, .cpython-*.so, .abi3.so).
bool is_extension_module(const std::string& path);

class MethodNames {
 public:
  // Reads the tables of `pid` from the mappings of `interpreter_files` (as /proc/PID/maps names
  // them) and of the extension modules it has loaded. Empty if nothing could be read.
  static MethodNames read(pid_t pid, const std::vector<process::MapEntry>& maps,
                          const std::vector<std::string>& interpreter_files);
  // Exposed for tests: the tables in `image`, with the runtime addresses of PyType_Type and
  // PyModuleDef_Type.
  static MethodNames scan(const MemoryImage& image, std::uint64_t type_type,
                          std::uint64_t module_def_type);

  // "list.sort", "time.sleep", "sorted" for the C function starting at runtime address
  // `function`; nullptr if no table names it.
  const std::string* at(std::uint64_t function) const;
  std::size_t size() const { return names_.size(); }
  const std::unordered_map<std::uint64_t, std::string>& all() const { return names_; }

 private:
  void add_table(const MemoryImage& image, std::uint64_t table, const std::string& owner);
  std::unordered_map<std::uint64_t, std::string> names_;
};

}  // namespace dapprof::sampler::native
