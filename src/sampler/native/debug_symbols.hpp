#pragma once
// The symbols of a stripped module that live elsewhere, tried in order: its separate debug file
// (debug_files.hpp), then its MiniDebugInfo (mini_debug_info.hpp); debuginfod (debuginfod.hpp)
// answers later and adds to the same cache. Kept per build id for the whole process: every
// session, and every process running the same interpreter, finds them at once.
#include <sys/types.h>

#include <memory>
#include <string>

#include "sampler/native/elf_symbols.hpp"
#include "sampler/native/line_table.hpp"

namespace dapprof::sampler::native {

struct DebugSymbols {
  ElfSymbols elf;
  std::unique_ptr<LineTable> lines;  // null without .debug_line (MiniDebugInfo has none)
  std::string origin;                // where they came from, for the log
};

// For `module`, which `pid` maps at `module_path` (as the target sees it) and whose build id is
// `build_id` ("" if none: then nothing is cached). Null if neither source has them.
std::shared_ptr<const DebugSymbols> find_debug_symbols(pid_t pid, const std::string& module_path,
                                                       const ElfSymbols& module,
                                                       const std::string& build_id);

// The debug file at `path` (from debuginfod's cache), checked against `build_id`, and cached
// under it. Null if it is not that build's.
std::shared_ptr<const DebugSymbols> load_debug_file(const std::string& path,
                                                    const std::string& build_id,
                                                    const std::string& origin);

}  // namespace dapprof::sampler::native
