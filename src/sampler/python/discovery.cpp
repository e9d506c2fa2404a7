#include "sampler/python/discovery.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <regex>

#include "sampler/process/elf.hpp"
#include "sampler/process/maps.hpp"
#include "sampler/process/target_files.hpp"
#include "sampler/process/tasks.hpp"
#include "sampler/python/layout.hpp"

namespace dapprof::sampler::python {
namespace {

std::string basename_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Mapped files that may hold the interpreter: libpython first (an executable linked against it
// has no _PyRuntime of its own), then anything named python*.
std::vector<const process::MapEntry*> candidates(const std::vector<process::MapEntry>& maps) {
  std::vector<const process::MapEntry*> libs, exes;
  for (const auto& m : maps) {
    if (m.path.empty() || m.path[0] != '/' || m.path.ends_with(" (deleted)")) continue;
    const std::string base = basename_of(m.path);
    auto& list = base.starts_with("libpython") ? libs : exes;
    if (!base.starts_with("libpython") && !base.starts_with("python")) continue;
    if (std::none_of(list.begin(), list.end(), [&](auto* e) { return e->path == m.path; }))
      list.push_back(&m);
  }
  libs.insert(libs.end(), exes.begin(), exes.end());
  return libs;
}

// "3.X" from a file name such as libpython3.9.so.1.0 or python3.9.
std::optional<std::pair<int, int>> version_from_name(const std::string& path) {
  static const std::regex re(R"((?:libpython|python)(\d)\.(\d+))");
  std::smatch m;
  const std::string base = basename_of(path);
  if (!std::regex_search(base, m, re)) return std::nullopt;
  return std::pair{std::stoi(m[1]), std::stoi(m[2])};
}

}  // namespace

std::string find_version_string(std::string_view image, int major, int minor) {
  const std::string prefix = fmt::format("{}.{}.", major, minor);
  for (std::size_t pos = image.find(prefix); pos != std::string_view::npos;
       pos = image.find(prefix, pos + 1)) {
    // sys.version starts a string: preceded by NUL (or the image start), then "X.Y.Z", an
    // optional release tag (a1, rc2, +), and " (".
    if (pos > 0 && image[pos - 1] != '\0') continue;
    std::size_t end = pos + prefix.size();
    const std::size_t digits = end;
    while (end < image.size() && std::isdigit(static_cast<unsigned char>(image[end]))) ++end;
    if (end == digits) continue;
    const std::size_t micro_end = end;
    while (end < image.size() && end - micro_end < 8 &&
           (std::isalnum(static_cast<unsigned char>(image[end])) || image[end] == '+'))
      ++end;
    if (image.substr(end, 2) == " (") return std::string(image.substr(pos, micro_end - pos));
  }
  return "";
}

std::string version_in_maps(const std::vector<process::MapEntry>& maps) {
  for (const process::MapEntry* entry : candidates(maps)) {
    if (auto v = version_from_name(entry->path)) return fmt::format("{}.{}", v->first, v->second);
  }
  return "";
}

Result<Interpreter> discover_interpreter(pid_t pid, const process::ProcessMemory& memory) {
  auto maps = process::read_maps(pid);
  if (!maps) return maps.error();
  std::optional<std::pair<int, int>> too_old;  // a python file of a version before _PyRuntime
  for (const process::MapEntry* entry : candidates(*maps)) {
    const std::string& path = entry->path;  // as the target sees it, in a container
    auto elf = process::ElfFile::open(process::target_file_path(pid, path, entry->inode));
    if (!elf) continue;
    std::optional<std::uint64_t> runtime = elf->symbol("_PyRuntime");
    if (!runtime) {
      if (auto section = elf->section(".PyRuntime")) runtime = section->addr;
    }
    if (!runtime) {
      // 3.6 and older keep the interpreter list in a variable a stripped build has no symbol for.
      if (auto v = version_from_name(path); v && *v < std::pair{3, 7}) too_old = v;
      continue;
    }
    const auto bias = elf->load_bias(*maps, path);
    if (!bias) continue;

    Interpreter interp;
    interp.binary = path;
    interp.runtime = *runtime + *bias;
    auto type = [&](const char* name) -> Address {
      auto s = elf->symbol(name);
      return s ? *s + *bias : 0;
    };
    interp.types = {type("PyCode_Type"), type("PyUnicode_Type"), type("PyBytes_Type"),
                    type("PyDict_Type"), type("PyLong_Type")};

    // 3.11+ exports its version as a number; older versions only have it as text: sys.version
    // ("3.9.18 (main, ...") is formatted into a static buffer in .bss at start-up.
    if (auto sym = elf->symbol("Py_Version")) {
      auto hex = memory.read<std::uint32_t>(*sym + *bias);
      if (!hex) return hex.error();
      interp.major = static_cast<int>((*hex >> 24) & 0xff);
      interp.minor = static_cast<int>((*hex >> 16) & 0xff);
      interp.version = fmt::format("{}.{}.{}", interp.major, interp.minor, (*hex >> 8) & 0xff);
      return interp;
    }
    const auto from_name = version_from_name(path);
    if (!from_name) {
      return Error{fmt::format("cannot tell the Python version of {} (no Py_Version symbol and "
                               "no version in the file name)",
                               path),
                   ErrorCode::UnsupportedVersion};
    }
    std::tie(interp.major, interp.minor) = *from_name;
    interp.version = fmt::format("{}.{}", interp.major, interp.minor);
    if (auto bss = elf->section(".bss"); bss && bss->size < (64u << 20)) {
      std::string image(bss->size, '\0');
      if (memory.read(bss->addr + *bias, image.data(), image.size())) {
        if (auto v = find_version_string(image, interp.major, interp.minor); !v.empty()) {
          interp.version = v;
        }
      }
    }
    return interp;
  }
  if (too_old) {
    return unreadable_version(pid, fmt::format("{}.{}", too_old->first, too_old->second));
  }
  const std::string name = process::process_name(pid);
  return Error{fmt::format("process {} ({}) is not a CPython process: no libpython or python "
                           "executable with _PyRuntime found",
                           pid, name.empty() ? "?" : name),
               ErrorCode::NotPython};
}

}  // namespace dapprof::sampler::python
