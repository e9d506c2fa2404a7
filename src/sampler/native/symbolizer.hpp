#pragma once
// Names of native frames: which module (the mapped file), which function (ELF symbol tables,
// C++ names demangled), and the source line where the module has DWARF line tables. Cached per
// address, so a stack seen before costs a few hash lookups.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "sampler/native/merge.hpp"
#include "sampler/native/module_map.hpp"

namespace dapprof::sampler::native {

class ElfSymbols;
class LineTable;

class Symbolizer {
 public:
  // `interpreter_files`: paths (as /proc/PID/maps shows them) of libpython and the python
  // executable, whose frames are classified as the interpreter's. `modules` must outlive this.
  Symbolizer(ModuleMap& modules, std::vector<std::string> interpreter_files);
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  // One frame per address (as NativeStack gives them). The pointers stay valid until the next
  // call.
  std::vector<const NativeFrame*> resolve(std::span<const std::uint64_t> addresses);

  // Exposed for tests: the demangled form of a C++ symbol, or the name itself.
  static std::string demangle(std::string_view name);

 private:
  struct File;
  const NativeFrame& lookup(std::uint64_t address);
  File* file(const Mapping& mapping);  // by its path as the maps show it

  ModuleMap& modules_;
  std::vector<std::string> interpreter_files_;
  std::uint64_t generation_ = 0;
  std::unordered_map<std::uint64_t, std::unique_ptr<NativeFrame>> cache_;
  std::unordered_map<std::string, std::unique_ptr<File>> files_;  // null: unreadable
};

}  // namespace dapprof::sampler::native
