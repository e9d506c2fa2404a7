#include "sampler/native/symbolizer.hpp"

#include <cxxabi.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "sampler/native/elf_symbols.hpp"
#include "sampler/native/line_table.hpp"
#include "sampler/process/target_files.hpp"

namespace dapprof::sampler::native {
namespace {

// Addresses remembered, at most (a long profile of code with many call sites stays bounded).
constexpr std::size_t kMaxCached = 1 << 16;

std::string basename_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

struct Symbolizer::File {
  ElfSymbols symbols;
  std::unique_ptr<LineTable> lines;  // null if the file has no usable line table
};

Symbolizer::Symbolizer(ModuleMap& modules, std::vector<std::string> interpreter_files)
    : modules_(modules),
      interpreter_files_(std::move(interpreter_files)),
      generation_(modules.generation()) {}

Symbolizer::~Symbolizer() = default;

std::string Symbolizer::demangle(std::string_view name) {
  if (!name.starts_with("_Z")) return std::string(name);
  const std::string mangled(name);
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> out(
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), &std::free);
  return status == 0 && out ? std::string(out.get()) : mangled;
}

Symbolizer::File* Symbolizer::file(const Mapping& mapping) {
  auto [it, inserted] = files_.try_emplace(mapping.path);
  if (!inserted) return it->second.get();
  // The target may see another file system (a container): its root is under /proc.
  const std::string path = process::target_file_path(modules_.pid(), mapping.path, mapping.inode);
  auto symbols = ElfSymbols::open(path);
  if (!symbols) {
    spdlog::debug("no symbols for {}: cannot read {}", mapping.path, path);
    return nullptr;
  }
  auto lines = LineTable::open(*symbols);
  it->second.reset(new File{std::move(*symbols), std::move(lines)});
  return it->second.get();
}

const NativeFrame& Symbolizer::lookup(std::uint64_t address) {
  auto& slot = cache_[address];
  if (slot) return *slot;
  slot = std::make_unique<NativeFrame>();
  NativeFrame& f = *slot;
  const Mapping* m = modules_.find(address);
  if (!m) {
    f.function = fmt::format("{:#x}", address);
    f.role = classify(f.function, false, false);
    return f;
  }
  f.module = m->path;
  f.interpreter = std::find(interpreter_files_.begin(), interpreter_files_.end(), m->path) !=
                  interpreter_files_.end();
  const std::uint64_t offset = address - m->start + m->offset;
  File* elf = m->path.starts_with("/") ? file(*m) : nullptr;
  const auto vaddr = elf ? elf->symbols.vaddr_of_offset(offset) : std::nullopt;
  const auto function = vaddr ? elf->symbols.function_at(*vaddr) : std::nullopt;
  if (function && !function->name.empty()) {
    f.function = demangle(function->name);
    f.symbolized = true;
  } else {
    // Unnamed: the function's start where the unwind tables give it, so that samples anywhere
    // in it add up; `addr2line -f -e MODULE 0xSTART` names it where debug symbols exist.
    f.function = fmt::format("{}+{:#x}", basename_of(m->path),
                             function ? function->start : vaddr.value_or(offset));
  }
  if (elf && elf->lines && vaddr) {
    if (auto where = elf->lines->find(*vaddr)) {
      f.file = std::move(where->file);
      f.line = where->line;
    }
  }
  f.role = classify(f.function, f.symbolized, f.interpreter);
  return f;
}

std::vector<const NativeFrame*> Symbolizer::resolve(std::span<const std::uint64_t> addresses) {
  // Forgetting happens only here, between stacks: pointers handed out stay valid until then.
  if (generation_ != modules_.generation() || cache_.size() > kMaxCached) {
    generation_ = modules_.generation();
    cache_.clear();
  }
  std::vector<const NativeFrame*> out;
  out.reserve(addresses.size());
  for (std::uint64_t a : addresses) out.push_back(&lookup(a));
  return out;
}

}  // namespace dapprof::sampler::native
