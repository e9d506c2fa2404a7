#include "sampler/native/method_names.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <unordered_set>

#include "sampler/process/elf.hpp"
#include "sampler/process/memory.hpp"
#include "sampler/process/target_files.hpp"

namespace dapprof::sampler::native {
namespace {

// Layouts of CPython's public structures, the same from 3.7 to 3.15 on 64-bit builds with the
// GIL (what Debian and pyenv build).
constexpr std::size_t kObType = 8;             // PyObject.ob_type
constexpr std::size_t kTpName = 24;            // PyTypeObject.tp_name
constexpr std::size_t kTpMethods = 232;        // PyTypeObject.tp_methods
constexpr std::size_t kModInit = 16;           // PyModuleDef.m_base.m_init
constexpr std::size_t kModName = 40;           // PyModuleDef.m_name
constexpr std::size_t kModMethods = 64;        // PyModuleDef.m_methods
constexpr std::size_t kMethodDef = 32;         // sizeof(PyMethodDef)
constexpr std::size_t kSpecSlots = 24;         // PyType_Spec.slots
constexpr int kTpMethodsSlot = 64;             // Py_tp_methods
constexpr int kLastSlot = 100;                 // above every slot id so far (3.15: 83)
constexpr std::uint32_t kMethodFlags = 0x3ff;  // METH_VARARGS .. METH_METHOD
constexpr std::size_t kMaxMethods = 1024;
constexpr std::size_t kMaxName = 128;

std::optional<std::uint64_t> word(const MemoryImage& image, std::uint64_t address) {
  const std::byte* p = image.at(address, 8);
  if (!p) return std::nullopt;
  std::uint64_t v = 0;
  std::memcpy(&v, p, 8);
  return v;
}

// The NUL-terminated string at `address` if it is a name: identifier characters, and dots
// where `dotted` (a type's or module's qualified name).
std::optional<std::string> name_at(const MemoryImage& image, std::uint64_t address, bool dotted) {
  std::string out;
  for (std::size_t i = 0; i < kMaxName; ++i) {
    const std::byte* p = image.at(address + i, 1);
    if (!p) return std::nullopt;
    const char c = static_cast<char>(*p);
    if (c == '\0') break;
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                    (i > 0 && c >= '0' && c <= '9') || (dotted && i > 0 && c == '.');
    if (!ok) return std::nullopt;
    out += c;
  }
  if (out.empty() || out.size() == kMaxName) return std::nullopt;
  return out;
}

}  // namespace

bool is_extension_module(const std::string& path) {
  return path.find("/lib-dynload/") != std::string::npos ||
         path.find(".cpython-") != std::string::npos || path.ends_with(".abi3.so");
}

const std::byte* MemoryImage::at(std::uint64_t address, std::size_t size) const {
  auto it = std::upper_bound(regions.begin(), regions.end(), address,
                             [](std::uint64_t a, const Region& r) { return a < r.start; });
  if (it == regions.begin()) return nullptr;
  --it;
  const std::uint64_t into = address - it->start;
  if (into > it->bytes.size() || size > it->bytes.size() - into) return nullptr;
  return it->bytes.data() + into;
}

bool MemoryImage::in_code(std::uint64_t address) const {
  return std::any_of(code.begin(), code.end(),
                     [&](const Range& r) { return address >= r.start && address < r.end; });
}

void MethodNames::add_table(const MemoryImage& image, std::uint64_t table,
                            const std::string& owner) {
  // The whole table must be well-formed: a pointer that merely looks like one is not taken.
  std::vector<std::pair<std::uint64_t, std::string>> entries;
  for (std::size_t i = 0; i < kMaxMethods; ++i) {
    const std::uint64_t entry = table + i * kMethodDef;
    const auto name = word(image, entry);
    if (!name) return;
    if (*name == 0) break;  // the sentinel
    const auto meth = word(image, entry + 8);
    const auto flags = word(image, entry + 16);
    if (!meth || !flags || !image.in_code(*meth) || (*flags & ~std::uint64_t{kMethodFlags}) != 0)
      return;
    auto method = name_at(image, *name, false);
    if (!method) return;
    entries.emplace_back(*meth, owner.empty() ? *method : owner + "." + *method);
  }
  // The first table to name a function keeps it (a type's own before one that shares it).
  for (auto& [meth, name] : entries) names_.try_emplace(meth, std::move(name));
}

MethodNames MethodNames::scan(const MemoryImage& image, std::uint64_t type_type,
                              std::uint64_t module_def_type) {
  MethodNames out;
  for (const auto& region : image.regions) {
    const std::uint64_t first = (region.start + 7) & ~std::uint64_t{7};
    for (std::uint64_t x = first; x + 8 <= region.start + region.bytes.size(); x += 8) {
      const auto ob_type = word(image, x + kObType);
      if (!ob_type) break;
      if (type_type != 0 && *ob_type == type_type) {
        const auto name = word(image, x + kTpName);
        const auto methods = word(image, x + kTpMethods);
        if (name && methods && *methods != 0) {
          if (auto type = name_at(image, *name, true)) out.add_table(image, *methods, *type);
        }
        continue;
      }
      // A module definition: imported (ob_type set) or not yet (NULL, and no m_init then).
      if ((module_def_type != 0 && *ob_type == module_def_type) ||
          (*ob_type == 0 && word(image, x + kModInit) == std::uint64_t{0})) {
        const auto name = word(image, x + kModName);
        const auto methods = word(image, x + kModMethods);
        if (name && methods && *methods != 0 && *name != 0) {
          if (auto module = name_at(image, *name, true))
            out.add_table(image, *methods, *module == "builtins" ? "" : *module);
        }
      }
      // A PyType_Spec {name, basicsize, itemsize, flags, slots} of a heap type: its slots
      // {int slot; void *pfunc} end with slot 0, and Py_tp_methods names its table.
      const auto spec_name = word(image, x);
      const auto slots = word(image, x + kSpecSlots);
      if (!spec_name || !slots || !image.at(*slots, 16)) continue;
      for (std::size_t i = 0; i < kLastSlot; ++i) {
        const auto id = word(image, *slots + i * 16);
        const auto pfunc = word(image, *slots + i * 16 + 8);
        if (!id || !pfunc || (*id & 0xffffffffu) > kLastSlot) break;
        const auto slot = static_cast<int>(*id & 0xffffffffu);
        if (slot == 0) break;
        if (slot == kTpMethodsSlot) {
          if (auto type = name_at(image, *spec_name, true)) out.add_table(image, *pfunc, *type);
          break;
        }
      }
    }
  }
  return out;
}

const std::string* MethodNames::at(std::uint64_t function) const {
  const auto it = names_.find(function);
  return it == names_.end() ? nullptr : &it->second;
}

MethodNames MethodNames::read(pid_t pid, const std::vector<process::MapEntry>& maps,
                              const std::vector<std::string>& interpreter_files) {
  const auto interpreter = [&](const std::string& path) {
    return std::find(interpreter_files.begin(), interpreter_files.end(), path) !=
           interpreter_files.end();
  };
  // &PyType_Type and &PyModuleDef_Type, from the interpreter's exported symbols.
  std::uint64_t type_type = 0, module_def_type = 0;
  std::unordered_set<std::string> tried;
  for (const auto& m : maps) {
    if (!interpreter(m.path) || !tried.insert(m.path).second) continue;
    auto elf = process::ElfFile::open(process::target_file_path(pid, m.path, m.inode));
    if (!elf) continue;
    const auto bias = elf->load_bias(maps, m.path);
    const auto type = elf->symbol("PyType_Type");
    const auto module = elf->symbol("PyModuleDef_Type");
    if (!bias || !type) continue;
    type_type = *type + *bias;
    if (module) module_def_type = *module + *bias;
  }
  if (type_type == 0) return {};

  MemoryImage image;
  const process::ProcessMemory memory(pid);
  for (const auto& m : maps) {
    if (m.perms.size() < 3 || m.perms[0] != 'r') continue;
    if (!interpreter(m.path) && !is_extension_module(m.path)) continue;
    if (m.perms[2] == 'x') {
      image.code.push_back({m.start, m.end});
      continue;
    }
    MemoryImage::Region region{m.start, std::vector<std::byte>(m.end - m.start)};
    if (auto s = memory.read(m.start, region.bytes.data(), region.bytes.size()); !s) {
      spdlog::debug("method tables: cannot read {} at {:#x}: {}", m.path, m.start, s.message());
      continue;
    }
    image.regions.push_back(std::move(region));
  }
  std::sort(image.regions.begin(), image.regions.end(),
            [](const auto& a, const auto& b) { return a.start < b.start; });
  auto out = scan(image, type_type, module_def_type);
  spdlog::debug("method tables of process {}: {} C functions named", pid, out.size());
  return out;
}

}  // namespace dapprof::sampler::native
