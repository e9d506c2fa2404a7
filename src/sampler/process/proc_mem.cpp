#include "sampler/process/proc_mem.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <limits>

namespace dapprof::sampler::process {
namespace {

std::atomic<ReadPath> g_path{ReadPath::VmReadv};
std::atomic<int> g_refusal{0};  // the errno that made the choice

std::string refusal_cause(int err) {
  switch (err) {
    case ENOSYS:
      return "not implemented: dapprof runs under an emulator such as qemu-user, or a seccomp "
             "profile hides the call";
    case EPERM:
      return "a seccomp profile forbids it, a container runtime's for instance, although "
             "ptrace access to the process is granted";
    default:
      return "a seccomp profile forbids it";
  }
}

}  // namespace

ReadPath read_path() { return g_path.load(std::memory_order_relaxed); }

int fall_back_after(int err, pid_t pid, ProcMemFile& file) {
  if (err != ENOSYS && err != EPERM) return err;
  // EPERM is also the answer for a process dapprof may not read at all: then the file cannot be
  // opened either, and the choice waits for a process that tells the two apart.
  if (err == EPERM) {
    if (const int open_err = file.open(); open_err != 0) return open_err == ESRCH ? ESRCH : EPERM;
  }
  ReadPath expected = ReadPath::VmReadv;
  if (g_path.compare_exchange_strong(expected, ReadPath::ProcMem)) {
    g_refusal.store(err);
    spdlog::info(
        "process_vm_readv fails with \"{}\" reading process {} ({}): reading the memory of "
        "processes through /proc/PID/mem instead from now on",
        std::strerror(err), pid, refusal_cause(err));
  }
  return 0;
}

std::string both_paths_refused(pid_t pid) {
  if (read_path() == ReadPath::VmReadv)
    return fmt::format("Both process_vm_readv and /proc/{}/mem were refused.", pid);
  return fmt::format(
      "process_vm_readv is refused to dapprof here (\"{}\": {}), and reading /proc/{}/mem "
      "instead was refused too.",
      std::strerror(g_refusal.load()), refusal_cause(g_refusal.load()), pid);
}

int ProcMemFile::open() {
  if (fd_) return 0;
  fd_ = UniqueFd(::open(fmt::format("/proc/{}/mem", pid_).c_str(), O_RDONLY | O_CLOEXEC));
  if (fd_) return 0;
  return errno == ENOENT ? ESRCH : errno;
}

int ProcMemFile::read(std::uint64_t addr, void* out, std::size_t size, std::uint64_t& calls) {
  // The file offset is signed: no user address is that high, so it cannot be mapped.
  constexpr auto kMaxOffset = static_cast<std::uint64_t>(std::numeric_limits<off_t>::max());
  if (addr > kMaxOffset || size > kMaxOffset - addr) return EFAULT;
  if (const int err = open(); err != 0) return err;
  bool reopened = false;
  for (std::size_t done = 0; done < size;) {
    ++calls;
    const ssize_t got = ::pread(fd_.get(), static_cast<char*>(out) + done, size - done,
                                static_cast<off_t>(addr + done));
    if (got > 0) {
      done += static_cast<std::size_t>(got);
    } else if (got == 0) {
      // The file reads nothing once the address space it was opened on is gone: the process
      // exited, or exec'd (then the new one is read through a new file).
      if (reopened) return ESRCH;
      reopened = true;
      fd_.reset();
      if (const int err = open(); err != 0) return err;
    } else if (errno != EINTR) {
      // EIO: the kernel could not read the page at addr + done (not mapped). A range that ends
      // past its mapping reads short first, then EIO here.
      return errno == EIO ? EFAULT : errno;
    }
  }
  return 0;
}

}  // namespace dapprof::sampler::process
