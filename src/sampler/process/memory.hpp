#pragma once
// Layer 1: another process's memory, read with process_vm_readv, or through /proc/PID/mem where
// that call is refused (see proc_mem.hpp). No knowledge of Python.
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "sampler/process/proc_mem.hpp"

namespace dapprof::sampler::process {

using Address = std::uint64_t;
class SampleReads;

class ProcessMemory {
 public:
  // A read of `size` bytes at `addr` into `out`; several go to the process in one system call.
  struct Chunk {
    Address addr;
    void* out;
    std::size_t size;
  };
  // Where the bytes come from instead of a process: an address space a test or a fuzz target
  // makes up. Asked once per batch of chunks (what would be one system call), so the sampler's
  // own reads pay one untaken branch per batch, nothing per byte or per chunk.
  class Source {
   public:
    virtual ~Source() = default;
    // Copies `chunks` in order until one is not mapped whole; how many were copied.
    virtual std::size_t copy(std::span<const Chunk> chunks) const = 0;
  };

  explicit ProcessMemory(pid_t pid) : pid_(pid), file_(pid) {}
  // Reads from `source`, which must outlive this; `pid` only names the target in errors.
  ProcessMemory(pid_t pid, const Source& source) : pid_(pid), source_(&source), file_(pid) {}
  pid_t pid() const { return pid_; }

  // Reads exactly `size` bytes at `addr`. A short read is an error. Errors carry a code:
  // ProcessExited (ESRCH), PermissionDenied (EPERM, with the fix in the message), Generic
  // (EFAULT: unmapped address, which in a running target usually means a torn read). The same
  // through /proc/PID/mem, except that it reads a PROT_NONE page (as zeros) where
  // process_vm_readv fails: the kernel reads that file with FOLL_FORCE, as a debugger's peek.
  Status read(Address addr, void* out, std::size_t size) const;

  template <typename T>
  Result<T> read(Address addr) const {
    T value{};
    if (auto s = read(addr, &value, sizeof(T)); !s) return s.error();
    return value;
  }
  Result<Address> read_pointer(Address addr) const { return read<Address>(addr); }

  // Several reads in one system call (one iovec each).
  Status read_many(std::span<const Chunk> chunks) const;
  // Each of `chunks`, in one system call where all are readable, else one by one: failed[i] is
  // set for each that could not be read (an object freed and its memory unmapped meanwhile).
  void read_each(std::span<const Chunk> chunks, std::vector<char>& failed) const;
  // How many of `chunks`, from the first, were read whole (the transfer stops at the first
  // unmapped one). Never served from a sample's bytes, never noted: for SampleReads itself.
  std::size_t read_prefix(std::span<const Chunk> chunks) const;

  // While a sample is taken: reads are served from its fetched bytes where they cover them, and
  // noted for the next sample's plan (see SampleReads). Null: every read goes to the process.
  void use(SampleReads* sample) { sample_ = sample; }
  // The sample's bytes at [addr, addr + size) if fetched (not noted), else nullptr.
  const std::byte* cached(Address addr, std::size_t size) const;
  // The whole fetched region that holds them, for a caller reading many things in a row (empty
  // if none).
  std::span<const std::byte> cached_region(Address addr, std::size_t size, Address& start) const;
  // Plans [addr, addr + size) for the next sample without reading it now.
  void note(Address addr, std::size_t size) const;
  // Reads now, from the process, whatever the sample has fetched (to see what changed).
  Status read_now(std::span<const Chunk> chunks) const { return transfer(chunks); }
  // A read on speculation (e.g. a window around what is needed): not planned for the next
  // sample; the caller notes the part it used.
  Status read_ahead(Address addr, void* out, std::size_t size) const;

  // A NUL-terminated C string of at most max_len bytes (an error if it is longer).
  Result<std::string> read_cstring(Address addr, std::size_t max_len = 4096) const;
  // Its first max_len bytes at most (cut there if longer). Reads stop at page boundaries, so a
  // string that ends just before unmapped memory is read whole.
  Result<std::string> read_cstring_prefix(Address addr, std::size_t max_len) const;

  // Number of system calls made so far (for benchmarks).
  std::uint64_t syscalls() const { return syscalls_; }
  // Number of system calls made by every ProcessMemory of this process so far (for benchmarks
  // that cannot reach the instance in use).
  static std::uint64_t total_syscalls();

 private:
  // process_vm_readv in batches of IOV_MAX until done or stopped (or, once that call is
  // refused, a pread of /proc/PID/mem each): the chunks filled whole, and errno if a call failed
  // outright.
  struct Moved {
    std::size_t whole = 0;
    int error = 0;
  };
  Moved move(std::span<const Chunk> chunks) const;
  Moved move_by_file(std::span<const Chunk> chunks) const;
  Status transfer(std::span<const Chunk> chunks) const;

  pid_t pid_;
  const Source* source_ = nullptr;  // null: the process's own memory
  mutable ProcMemFile file_;        // opened at its first use only
  SampleReads* sample_ = nullptr;
  mutable std::uint64_t syscalls_ = 0;
  mutable std::vector<Chunk> pending_;  // read_many's uncached chunks, kept to reuse capacity
};

}  // namespace dapprof::sampler::process
