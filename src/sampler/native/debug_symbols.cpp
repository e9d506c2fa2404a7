#include "sampler/native/debug_symbols.hpp"

#include <spdlog/spdlog.h>

#include <mutex>
#include <unordered_map>

#include "sampler/native/debug_files.hpp"
#include "sampler/native/mini_debug_info.hpp"

namespace dapprof::sampler::native {
namespace {

struct Cache {
  std::mutex mutex;
  // Null: looked for and not found (debuginfod may still add it).
  std::unordered_map<std::string, std::shared_ptr<const DebugSymbols>> by_build_id;
};

Cache& cache() {
  static Cache c;
  return c;
}

std::shared_ptr<const DebugSymbols> wrap(ElfSymbols elf, std::string origin) {
  auto out =
      std::make_shared<DebugSymbols>(DebugSymbols{std::move(elf), nullptr, std::move(origin)});
  out->lines = LineTable::open(out->elf);  // reads the sections where they now live
  return out;
}

}  // namespace

std::shared_ptr<const DebugSymbols> find_debug_symbols(pid_t pid, const std::string& module_path,
                                                       const ElfSymbols& module,
                                                       const std::string& build_id) {
  auto& c = cache();
  std::unique_lock lock(c.mutex);
  if (!build_id.empty()) {
    if (auto it = c.by_build_id.find(build_id); it != c.by_build_id.end()) return it->second;
  }
  // Looked for under the lock: two sessions on one interpreter read its debug file once.
  std::shared_ptr<const DebugSymbols> found;
  if (auto file = open_debug_file(pid, module_path, module)) {
    found = wrap(std::move(*file), "separate debug file");
  } else if (auto mini = open_mini_debug_info(module, module_path)) {
    spdlog::debug("{}", file.message());
    found = wrap(std::move(*mini), "MiniDebugInfo");
  } else {
    spdlog::debug("{}; {}", file.message(), mini.message());
  }
  if (found)
    spdlog::debug("symbols of {} from its {} ({} functions)", module_path, found->origin,
                  found->elf.symbol_count());
  if (!build_id.empty()) c.by_build_id[build_id] = found;
  return found;
}

std::shared_ptr<const DebugSymbols> load_debug_file(const std::string& path,
                                                    const std::string& build_id,
                                                    const std::string& origin) {
  auto file = ElfSymbols::open(path);
  if (!file || build_id_of(*file) != build_id) return nullptr;
  auto found = wrap(std::move(*file), origin);
  auto& c = cache();
  std::lock_guard lock(c.mutex);
  c.by_build_id[build_id] = found;
  return found;
}

}  // namespace dapprof::sampler::native
