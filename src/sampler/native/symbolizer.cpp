#include "sampler/native/symbolizer.hpp"

#include <cxxabi.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "sampler/native/debug_files.hpp"
#include "sampler/native/debug_symbols.hpp"
#include "sampler/native/debuginfod.hpp"
#include "sampler/native/elf_symbols.hpp"
#include "sampler/native/line_table.hpp"
#include "sampler/native/tail_calls.hpp"
#include "sampler/process/target_files.hpp"

namespace dapprof::sampler::native {
namespace {

// Addresses remembered, at most (a long profile of code with many call sites stays bounded).
constexpr std::size_t kMaxCached = 1 << 16;
// Method tables are read again while frames they may name stay unnamed (a module imported
// since), at most this often, backing off to the longest interval while nothing new turns up.
constexpr std::chrono::milliseconds kMethodsFirstInterval{500};
constexpr std::chrono::milliseconds kMethodsLongestInterval{30000};

std::string basename_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

struct Symbolizer::File {
  ElfSymbols symbols;
  std::unique_ptr<LineTable> lines;           // null if the file has no usable line table
  std::string path;                           // as the maps show it
  std::string build_id;                       // of a stripped file; "" otherwise
  std::shared_ptr<const DebugSymbols> debug;  // what names a stripped file's functions
  // Functions that the methods of this file jump to, by link-time start (tail_calls.hpp), as of
  // the method tables' read `tail_generation`.
  std::unordered_map<std::uint64_t, std::string> tail_names;
  std::uint64_t tail_generation = 0;

  const LineTable* line_table() const {
    if (lines) return lines.get();
    return debug ? debug->lines.get() : nullptr;
  }
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
  it->second.reset(
      new File{std::move(*symbols), std::move(lines), mapping.path, {}, nullptr, {}, 0});
  File* f = it->second.get();
  if (!f->symbols.has_symtab()) {
    f->build_id = build_id_of(f->symbols);
    f->debug = find_debug_symbols(modules_.pid(), mapping.path, f->symbols, f->build_id);
    if (!f->debug && !f->build_id.empty()) {
      if (auto* debuginfod = Debuginfod::instance()) {
        (void)debuginfod->query(f->build_id);  // asked now, answered between later stacks
        awaiting_debuginfod_.push_back(f);
      }
    }
  }
  return f;
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
  auto named = function && !function->name.empty() ? function : std::nullopt;
  if (!named && elf && elf->debug && vaddr) {
    named = elf->debug->elf.function_at(*vaddr);
    if (named && named->name.empty()) named.reset();
  }
  const std::string* method = nullptr;
  if (!named && function && vaddr && method_tables_maybe(*m)) {
    if (!methods_read_) {
      methods_ = MethodNames::read(modules_.pid(), modules_.entries(), interpreter_files_);
      ++methods_generation_;
      methods_read_ = true;
      methods_at_ = std::chrono::steady_clock::now();
    }
    method = methods_.at(address - (*vaddr - function->start));
    if (!method) method = tail_called(*elf, address - *vaddr, function->start);
    if (!method) methods_wanted_ = true;
  }
  if (named) {
    f.function = demangle(named->name);
    f.symbolized = true;
  } else if (method) {
    f.function = *method;
    f.symbolized = true;
  } else {
    // Unnamed: the function's start where the unwind tables give it, so that samples anywhere
    // in it add up; `addr2line -f -e MODULE 0xSTART` names it where debug symbols exist.
    f.function = fmt::format("{}+{:#x}", basename_of(m->path),
                             function ? function->start : vaddr.value_or(offset));
  }
  const LineTable* lines = elf ? elf->line_table() : nullptr;
  if (lines && vaddr) {
    if (auto where = lines->find(*vaddr)) {
      f.file = std::move(where->file);
      f.line = where->line;
    }
  }
  f.role = classify(f.function, f.symbolized, f.interpreter);
  return f;
}

bool Symbolizer::method_tables_maybe(const Mapping& mapping) const {
  return std::find(interpreter_files_.begin(), interpreter_files_.end(), mapping.path) !=
             interpreter_files_.end() ||
         is_extension_module(mapping.path);
}

const std::string* Symbolizer::tail_called(File& f, std::uint64_t bias, std::uint64_t start) {
  if (f.tail_generation != methods_generation_) {
    std::vector<std::pair<std::uint64_t, std::string>> mine;
    for (const auto& [function, name] : methods_.all()) {
      const std::uint64_t vaddr = function - bias;  // wraps for another file's: not found
      if (f.symbols.is_function_start(vaddr)) mine.emplace_back(vaddr, name);
    }
    f.tail_names = tail_call_names(f.symbols, mine);
    f.tail_generation = methods_generation_;
  }
  const auto it = f.tail_names.find(start);
  return it == f.tail_names.end() ? nullptr : &it->second;
}

bool Symbolizer::refresh() {
  bool changed = false;
  for (auto it = awaiting_debuginfod_.begin(); it != awaiting_debuginfod_.end();) {
    File* f = *it;
    const auto answer = Debuginfod::instance()->query(f->build_id);
    if (answer.state == Debuginfod::State::Pending) {
      ++it;
      continue;
    }
    if (answer.state == Debuginfod::State::Found)
      f->debug = load_debug_file(answer.path, f->build_id, "debuginfod");
    if (f->debug) {
      spdlog::info("debuginfod sent the debug information of {}", f->path);
      changed = true;
    } else {
      spdlog::warn(
          "debuginfod ({}) has no debug information for {} (build id {}): {}; its functions "
          "without a symbol stay unnamed",
          Debuginfod::instance()->urls(), f->path, f->build_id,
          answer.error.empty() ? "the file sent is not that build's" : answer.error);
    }
    it = awaiting_debuginfod_.erase(it);
  }
  const auto now = std::chrono::steady_clock::now();
  if (methods_read_ && methods_wanted_ && now - methods_at_ >= methods_interval_) {
    const std::size_t before = methods_.size();
    methods_ = MethodNames::read(modules_.pid(), modules_.entries(), interpreter_files_);
    ++methods_generation_;
    methods_at_ = now;
    methods_wanted_ = false;
    if (methods_.size() != before) {
      changed = true;
      methods_interval_ = kMethodsFirstInterval;
    } else {
      methods_interval_ = std::min(methods_interval_ * 2, kMethodsLongestInterval);
    }
  }
  return changed;
}

std::vector<const NativeFrame*> Symbolizer::resolve(std::span<const std::uint64_t> addresses) {
  // Forgetting happens only here, between stacks: pointers handed out stay valid until then.
  const bool renamed = refresh();
  if (renamed || generation_ != modules_.generation() || cache_.size() > kMaxCached) {
    generation_ = modules_.generation();
    cache_.clear();
  }
  std::vector<const NativeFrame*> out;
  out.reserve(addresses.size());
  for (std::uint64_t a : addresses) out.push_back(&lookup(a));
  return out;
}

}  // namespace dapprof::sampler::native
