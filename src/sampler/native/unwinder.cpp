#include "sampler/native/unwinder.hpp"

#include <elf.h>
#include <fmt/format.h>
#include <libunwind-ptrace.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <optional>

#include "sampler/native/unwind_tables.hpp"
#include "sampler/process/memory.hpp"

// libunwind's search of a remote unwind table index: exported by libunwind for each architecture
// (_Ux86_64_..., _Uaarch64_...) but declared only in its private headers.
extern "C" int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t, unw_word_t, unw_dyn_info_t*,
                                                  unw_proc_info_t*, int, void*);

namespace dapprof::sampler::native {
namespace {

constexpr std::uint64_t kPage = 4096;
// Unwind rules cached by address. libunwind's default (128) thrashes on a Python process, whose
// stacks pass through a few hundred distinct call sites.
constexpr std::size_t kRuleCacheSize = 4096;
// Pages of read-only files (unwind tables, code) kept between samples, at most.
constexpr std::size_t kMaxKeptPages = 2048;

struct AddressSpaceDeleter {
  void operator()(unw_addr_space* as) const { unw_destroy_addr_space(as); }
};
struct UptDeleter {
  void operator()(void* upt) const { _UPT_destroy(upt); }
};
using AddressSpace = std::unique_ptr<unw_addr_space, AddressSpaceDeleter>;
using Upt = std::unique_ptr<void, UptDeleter>;
using PageData = std::array<std::byte, kPage>;

}  // namespace

struct Unwinder::Impl {
  Impl(ModuleMap& m) : modules(m), memory(m.pid()), tables(m.pid()) {}

  ModuleMap& modules;
  process::ProcessMemory memory;
  AddressSpace space;
  std::uint64_t generation = 0;
  UnwindTables tables;
  std::unordered_map<std::string, Upt> upts;                           // by module path
  std::unordered_map<std::uint64_t, std::unique_ptr<PageData>> kept;   // read-only file pages
  std::unordered_map<std::uint64_t, std::unique_ptr<PageData>> stack;  // this unwind's pages

  // The thread being unwound.
  pid_t tid = 0;
  bool have_regs = false;
  user_regs_struct regs{};

  // Drops whatever depends on the module map once it changed (a module loaded or unloaded).
  void sync() {
    if (generation == modules.generation()) return;
    generation = modules.generation();
    unw_flush_cache(space.get(), 0, 0);
    upts.clear();
    tables.clear();
    kept.clear();
  }

  std::optional<UnwindTable> table_for(unw_word_t ip) {
    const Mapping* m = modules.find(ip);
    sync();
    if (!m || m->path.empty() || m->path.front() != '/') return std::nullopt;
    return tables.find(*m);
  }

  void* upt_for(unw_word_t ip) {
    const Mapping* m = modules.find(ip);
    sync();  // find() may have re-read the maps
    if (!m || m->path.empty() || m->path.front() != '/') return nullptr;
    auto& upt = upts[m->path];
    if (!upt) upt.reset(_UPT_create(modules.pid()));
    return upt.get();
  }

  const PageData* page(std::uint64_t address) {
    const std::uint64_t base = address & ~(kPage - 1);
    if (auto it = stack.find(base); it != stack.end()) return it->second.get();
    if (auto it = kept.find(base); it != kept.end()) return it->second.get();
    auto data = std::make_unique<PageData>();
    if (!memory.read(base, data->data(), kPage)) return nullptr;
    const PageData* p = data.get();
    if (modules.read_only_file(base)) {
      if (kept.size() >= kMaxKeptPages) kept.clear();
      kept.emplace(base, std::move(data));
    } else {
      stack.emplace(base, std::move(data));
    }
    return p;
  }

  int read_word(unw_word_t address, unw_word_t* value) {
    std::byte buf[sizeof(unw_word_t)];
    const std::uint64_t offset = address & (kPage - 1);
    const std::size_t first = std::min<std::uint64_t>(sizeof buf, kPage - offset);
    const PageData* p = page(address);
    if (!p) return -UNW_EINVAL;
    std::memcpy(buf, p->data() + offset, first);
    if (first < sizeof buf) {  // a word straddling two pages
      const PageData* next = page(address + first);
      if (!next) return -UNW_EINVAL;
      std::memcpy(buf + first, next->data(), sizeof buf - first);
    }
    std::memcpy(value, buf, sizeof buf);
    return 0;
  }

  int read_register(unw_regnum_t reg, unw_word_t* value) {
    if (!have_regs) {
      // Every architecture has NT_PRSTATUS (aarch64 has no PTRACE_GETREGS).
      iovec io{&regs, sizeof regs};
      if (ptrace(PTRACE_GETREGSET, tid, NT_PRSTATUS, &io) != 0) return -UNW_EBADREG;
      have_regs = true;
    }
#if defined(__x86_64__)
    const unsigned long long user_regs_struct::*fields[] = {
        &user_regs_struct::rax, &user_regs_struct::rdx, &user_regs_struct::rcx,
        &user_regs_struct::rbx, &user_regs_struct::rsi, &user_regs_struct::rdi,
        &user_regs_struct::rbp, &user_regs_struct::rsp, &user_regs_struct::r8,
        &user_regs_struct::r9,  &user_regs_struct::r10, &user_regs_struct::r11,
        &user_regs_struct::r12, &user_regs_struct::r13, &user_regs_struct::r14,
        &user_regs_struct::r15, &user_regs_struct::rip};
    if (reg < 0 || static_cast<std::size_t>(reg) >= std::size(fields)) return -UNW_EBADREG;
    *value = regs.*fields[reg];
    return 0;
#elif defined(__aarch64__)
    // libunwind numbers x0-x30 0-30, then sp (31) and pc (32), as user_regs_struct lays them out.
    if (reg >= 0 && reg <= 30) {
      *value = regs.regs[reg];
    } else if (reg == UNW_AARCH64_SP) {
      *value = regs.sp;
    } else if (reg == UNW_AARCH64_PC) {
      *value = regs.pc;
    } else {
      return -UNW_EBADREG;
    }
    return 0;
#else
#error "native unwinding reads x86-64 registers; port read_register to this architecture"
#endif
  }
};

namespace {

// The unwind in progress on this thread. libunwind passes the accessors an argument, but not
// always ours: _UPT_find_proc_info hands its own handle on to access_mem.
thread_local Unwinder::Impl* t_current = nullptr;

struct CurrentUnwind {
  explicit CurrentUnwind(Unwinder::Impl& impl) { t_current = &impl; }
  ~CurrentUnwind() { t_current = nullptr; }
  CurrentUnwind(const CurrentUnwind&) = delete;
  CurrentUnwind& operator=(const CurrentUnwind&) = delete;
};

int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t* pi, int need_info, void*) {
  if (!t_current) return -UNW_EINVAL;
  if (auto table = t_current->table_for(ip)) {
    // The table's own search, reading the index and the FDEs from the target's memory.
    unw_dyn_info_t di{};
    di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
    di.start_ip = table->start_ip;
    di.end_ip = table->end_ip;
    di.u.rti.segbase = table->header;
    di.u.rti.table_data = table->table;
    di.u.rti.table_len = table->entries * 8 / sizeof(unw_word_t);
    const int r = UNW_OBJ(dwarf_search_unwind_table)(as, ip, &di, pi, need_info, nullptr);
    if (r >= 0) return r;
  }
  void* upt = t_current->upt_for(ip);
  if (!upt) return -UNW_ENOINFO;
  return _UPT_find_proc_info(as, ip, pi, need_info, upt);
}

void put_unwind_info(unw_addr_space_t as, unw_proc_info_t* pi, void* arg) {
  // Frees what find_proc_info allocated; does not use its argument's contents.
  _UPT_put_unwind_info(as, pi, arg);
}

int get_dyn_info_list_addr(unw_addr_space_t, unw_word_t*, void*) {
  return -UNW_ENOINFO;  // no run-time registered unwind info (JITs) is looked for
}

int access_mem(unw_addr_space_t, unw_word_t address, unw_word_t* value, int write, void*) {
  if (write || !t_current) return -UNW_EINVAL;  // the target is only read
  return t_current->read_word(address, value);
}

int access_reg(unw_addr_space_t, unw_regnum_t reg, unw_word_t* value, int write, void*) {
  if (write || !t_current) return -UNW_EINVAL;
  return t_current->read_register(reg, value);
}

int access_fpreg(unw_addr_space_t, unw_regnum_t, unw_fpreg_t*, int, void*) {
  return -UNW_EBADREG;  // not needed to unwind
}

int resume(unw_addr_space_t, unw_cursor_t*, void*) { return -UNW_EINVAL; }

unw_accessors_t accessors = {
    .find_proc_info = find_proc_info,
    .put_unwind_info = put_unwind_info,
    .get_dyn_info_list_addr = get_dyn_info_list_addr,
    .access_mem = access_mem,
    .access_reg = access_reg,
    .access_fpreg = access_fpreg,
    .resume = resume,
    .get_proc_name = nullptr,
};

}  // namespace

Result<std::unique_ptr<Unwinder>> Unwinder::create(ModuleMap& modules) {
  auto impl = std::make_unique<Impl>(modules);
  impl->space.reset(unw_create_addr_space(&accessors, 0));
  if (!impl->space) return Error{"libunwind could not create an address space"};
  unw_set_caching_policy(impl->space.get(), UNW_CACHE_GLOBAL);
  unw_set_cache_size(impl->space.get(), kRuleCacheSize, 0);
  impl->generation = modules.generation();
  return std::unique_ptr<Unwinder>(new Unwinder(std::move(impl)));
}

Unwinder::Unwinder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Unwinder::~Unwinder() = default;

std::uint64_t Unwinder::memory_reads() const { return impl_->memory.syscalls(); }

Result<NativeStack> Unwinder::unwind(pid_t tid) {
  Impl& impl = *impl_;
  const CurrentUnwind current(impl);
  impl.sync();
  impl.tid = tid;
  impl.have_regs = false;
  impl.stack.clear();

  NativeStack out;
  unw_word_t probe = 0;
  if (impl.read_register(UNW_REG_IP, &probe) < 0) {
    // ESRCH: the thread exited, or is not stopped by us (created after the pause).
    return Error{
        fmt::format("cannot read the registers of thread {}: {}", tid, std::strerror(errno)),
        ErrorCode::ProcessExited};
  }
  unw_cursor_t cursor;
  if (const int r = unw_init_remote(&cursor, impl.space.get(), &impl); r < 0) {
    return Error{fmt::format("cannot unwind thread {}: {}", tid, unw_strerror(r))};
  }
  unw_word_t last_sp = 0;
  for (std::size_t depth = 0; depth < kMaxNativeFrames; ++depth) {
    unw_word_t ip = 0, sp = 0;
    if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0) break;
    unw_get_reg(&cursor, UNW_REG_SP, &sp);
    // A caller's frame lies above its callee's; anything else is a corrupt or cyclic unwind.
    if (depth > 0 && sp < last_sp) {
      out.truncated = true;
      break;
    }
    last_sp = sp;
    out.addresses.push_back(depth == 0 ? ip : ip - 1);
    out.stack_pointers.push_back(sp);
    const int step = unw_step(&cursor);
    if (step == 0) break;
    if (step < 0) {
      out.truncated = true;
      break;
    }
    if (depth + 1 == kMaxNativeFrames) out.truncated = true;
  }
  impl.stack.clear();
  return out;
}

}  // namespace dapprof::sampler::native
