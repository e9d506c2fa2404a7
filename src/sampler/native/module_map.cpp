#include "sampler/native/module_map.hpp"

#include <algorithm>

namespace dapprof::sampler::native {
namespace {

// Reading /proc/PID/maps costs tens of microseconds: not on every unknown address of JIT code.
constexpr auto kRefreshInterval = std::chrono::milliseconds(20);
constexpr std::size_t kMaxUnknown = 4096;

bool same(const std::vector<Mapping>& a, const std::vector<Mapping>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const Mapping& x, const Mapping& y) {
    return x.start == y.start && x.end == y.end && x.offset == y.offset && x.path == y.path;
  });
}

}  // namespace

std::vector<Mapping> ModuleMap::executable(const std::vector<process::MapEntry>& entries) {
  std::vector<Mapping> out;
  for (const auto& e : entries) {
    if (e.perms.size() < 3 || e.perms[2] != 'x') continue;
    // "[vdso]" and friends are code too, but have no file to read symbols from.
    out.push_back({e.start, e.end, e.offset, e.path, e.inode});
  }
  std::sort(out.begin(), out.end(),
            [](const Mapping& a, const Mapping& b) { return a.start < b.start; });
  return out;
}

Status ModuleMap::load() {
  auto entries = process::read_maps(pid_);
  if (!entries) return entries.error();
  auto exec = executable(*entries);
  last_refresh_ = std::chrono::steady_clock::now();
  if (generation_ != 0 && same(exec, exec_)) return Ok{};
  entries_ = std::move(*entries);
  exec_ = std::move(exec);
  unknown_.clear();
  ++generation_;
  return Ok{};
}

const Mapping* ModuleMap::lookup(std::uint64_t address) const {
  auto it = std::upper_bound(exec_.begin(), exec_.end(), address,
                             [](std::uint64_t a, const Mapping& m) { return a < m.start; });
  if (it == exec_.begin()) return nullptr;
  --it;
  return address < it->end ? &*it : nullptr;
}

const Mapping* ModuleMap::find(std::uint64_t address) {
  if (const Mapping* m = lookup(address)) return m;
  if (unknown_.contains(address)) return nullptr;
  const auto now = std::chrono::steady_clock::now();
  if (generation_ != 0 && now - last_refresh_ < kRefreshInterval) return nullptr;
  (void)load();  // a failure leaves the old maps in place
  if (const Mapping* m = lookup(address)) return m;
  // Not code of any file (JIT, a trampoline) nor of a module loaded since: do not look again.
  if (unknown_.size() >= kMaxUnknown) unknown_.clear();
  unknown_.insert(address);
  return nullptr;
}

bool ModuleMap::read_only_file(std::uint64_t address) const {
  // /proc lists mappings by address.
  auto it =
      std::upper_bound(entries_.begin(), entries_.end(), address,
                       [](std::uint64_t a, const process::MapEntry& e) { return a < e.start; });
  if (it == entries_.begin()) return false;
  --it;
  return address < it->end && it->perms.size() >= 2 && it->perms[1] != 'w' && !it->path.empty() &&
         it->path.front() == '/';
}

}  // namespace dapprof::sampler::native
