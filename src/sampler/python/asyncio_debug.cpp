#include "sampler/python/asyncio_debug.hpp"

#include <fmt/format.h>

#include <array>
#include <cstring>
#include <vector>

#include "sampler/process/elf.hpp"
#include "sampler/process/maps.hpp"
#include "sampler/process/target_files.hpp"

namespace dapprof::sampler::python {
namespace {

constexpr std::size_t kWords = 13;
// No task or thread state is anywhere near this big: larger offsets are a misread (or a section
// of another shape), and the reader sizes its copies of tasks from them. The interpreter state
// is large (220 KiB on 3.14), and only ever read a word at a time.
constexpr std::uint64_t kMaxStruct = 1u << 16;
constexpr std::uint64_t kMaxInterpreterState = 1u << 24;

bool is_asyncio_module(const std::string& path) {
  const auto slash = path.rfind('/');
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  return base.starts_with("_asyncio.") || base.starts_with("_asyncio_");
}

Status check(const AsyncioOffsets& o) {
  const auto in = [](std::uint64_t field, std::uint64_t size, std::uint64_t whole,
                     std::uint64_t most = kMaxStruct) {
    return whole < most && field + size <= whole;
  };
  const bool task = in(o.task_name, 8, o.task_size) && in(o.task_awaited_by, 8, o.task_size) &&
                    in(o.task_is_task, 1, o.task_size) &&
                    in(o.task_awaited_by_is_set, 1, o.task_size) &&
                    in(o.task_coro, 8, o.task_size) && in(o.task_node, 16, o.task_size);
  const bool interp = in(o.interp_tasks_head, 16, o.interp_size, kMaxInterpreterState);
  const bool tstate = in(o.tstate_running_loop, 8, o.tstate_size) &&
                      in(o.tstate_running_task, 8, o.tstate_size) &&
                      in(o.tstate_tasks_head, 16, o.tstate_size);
  if (task && interp && tstate) return Ok{};
  return Error{"the target's .AsyncioDebug section holds implausible offsets",
               ErrorCode::UnsupportedVersion};
}

}  // namespace

Result<AsyncioTarget> find_asyncio(pid_t pid, const process::ProcessMemory& memory,
                                   const std::string& interpreter_binary) {
  auto maps = process::read_maps(pid);
  if (!maps) return maps.error();
  // The extension module first (3.14 as Debian builds it), then the interpreter itself (_asyncio
  // built in, as Debian's 3.15).
  std::vector<const process::MapEntry*> files;
  const process::MapEntry* interpreter = nullptr;
  for (const auto& m : *maps) {
    if (m.path == interpreter_binary && !interpreter) interpreter = &m;
    if (!is_asyncio_module(m.path)) continue;
    bool seen = false;
    for (const auto* f : files) seen = seen || f->path == m.path;
    if (!seen) files.push_back(&m);
  }
  if (interpreter) files.push_back(interpreter);

  AsyncioTarget target;
  bool found = false;
  for (const auto* entry : files) {
    auto elf = process::ElfFile::open(process::target_file_path(pid, entry->path, entry->inode));
    if (!elf) continue;
    const auto bias = elf->load_bias(*maps, entry->path);
    if (!bias) continue;
    if (entry == interpreter) {
      // A pointer variable: its value is the dummy object's address.
      if (auto sym = elf->symbol("_PySet_Dummy")) {
        auto dummy = memory.read<process::Address>(*sym + *bias);
        if (dummy) target.set_dummy = *dummy;
      }
    }
    if (found) continue;
    const auto section = elf->section(".AsyncioDebug");
    if (!section || section->size < kWords * 8) continue;
    std::array<std::uint64_t, kWords> w{};
    if (auto s = memory.read(section->addr + *bias, w.data(), sizeof w); !s) return s.error();
    AsyncioOffsets& o = target.offsets;
    o = {w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8], w[9], w[10], w[11], w[12]};
    if (auto s = check(o); !s) return s.error();
    found = true;
  }
  if (!found) {
    return Error{fmt::format("process {} has not imported asyncio (no mapped file has CPython's "
                             ".AsyncioDebug section): it has no tasks to show",
                             pid),
                 ErrorCode::NotPython};
  }
  return target;
}

}  // namespace dapprof::sampler::python
