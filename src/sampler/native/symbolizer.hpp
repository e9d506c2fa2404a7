#pragma once
// Names of native frames: which module (the mapped file), which function, and the source line
// where DWARF line tables exist. A function is named, in this order, by the module's own symbol
// tables (C++ names demangled); for a stripped module, by its separate debug file or its
// MiniDebugInfo (debug_symbols.hpp), or what debuginfod sends later (debuginfod.hpp); in the
// interpreter and its extension modules, by CPython's method tables (method_names.hpp).
// Cached per address, so a stack seen before costs a few hash lookups.
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "sampler/native/merge.hpp"
#include "sampler/native/method_names.hpp"
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
  bool method_tables_maybe(const Mapping& mapping) const;
  // The method a function of `f` starting at link-time `start` was jumped to from, if any.
  const std::string* tail_called(File& f, std::uint64_t bias, std::uint64_t start);
  // Between stacks: debuginfod's answers, and method tables read again while frames that they
  // may name stay unnamed. True if names may have changed.
  bool refresh();

  ModuleMap& modules_;
  std::vector<std::string> interpreter_files_;
  std::uint64_t generation_ = 0;
  std::unordered_map<std::uint64_t, std::unique_ptr<NativeFrame>> cache_;
  std::unordered_map<std::string, std::unique_ptr<File>> files_;  // null: unreadable
  std::vector<File*> awaiting_debuginfod_;
  MethodNames methods_;
  bool methods_read_ = false;
  std::uint64_t methods_generation_ = 0;  // changes with every read of the tables
  bool methods_wanted_ = false;  // a frame they might name was left unnamed since the last read
  std::chrono::steady_clock::time_point methods_at_{};
  std::chrono::milliseconds methods_interval_{500};
};

}  // namespace dapprof::sampler::native
