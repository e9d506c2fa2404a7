#pragma once
// Where a stripped module's symbols went: a separate debug file, found as GDB finds it, by the
// module's build id (/usr/lib/debug/.build-id/xx/yyyy.debug, what Debian's -dbgsym packages
// install) or by its .gnu_debuglink (a file name and CRC: beside the module, in .debug/ beside
// it, or under the debug directory at the module's own path). A target in a container has its
// own /usr/lib/debug: every candidate is looked for through /proc/PID/root first.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "sampler/native/elf_symbols.hpp"

namespace dapprof::sampler::native {

// The module's build id in hex (from .note.gnu.build-id); "" if it has none.
std::string build_id_of(const ElfSymbols& module);

struct DebugLink {
  std::string name;
  std::uint32_t crc = 0;  // CRC-32 of the whole debug file
};
std::optional<DebugLink> debug_link_of(const ElfSymbols& module);

// The directories searched, as the target sees them: DAPPROF_DEBUG_DIRS (colon-separated), else
// /usr/lib/debug.
std::vector<std::string> debug_dirs();

// The paths a debug file of `module_path` may have, in the order looked at.
std::vector<std::string> debug_file_candidates(const std::string& module_path,
                                               const std::string& build_id,
                                               const std::optional<DebugLink>& link,
                                               const std::vector<std::string>& dirs);

// The debug file of `module` (which `pid` maps at `module_path`) that matches it: the same build
// id, or the CRC its debuglink names. An error says where it was looked for.
Result<ElfSymbols> open_debug_file(pid_t pid, const std::string& module_path,
                                   const ElfSymbols& module);

// Whether `file` is the debug file of a module with `build_id` (if not empty: the same build id),
// else of `link` (the same CRC).
bool matches(const ElfSymbols& file, const std::string& build_id,
             const std::optional<DebugLink>& link);

}  // namespace dapprof::sampler::native
