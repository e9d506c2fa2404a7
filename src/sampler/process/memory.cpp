#include "sampler/process/memory.hpp"

#include <fmt/format.h>
#include <sys/uio.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <vector>

#include "sampler/process/permissions.hpp"
#include "sampler/process/sample_reads.hpp"

namespace dapprof::sampler::process {
namespace {

// The kernel caps an iovec array at IOV_MAX (1024) entries per call.
constexpr std::size_t kMaxIov = 1024;
constexpr std::uint64_t kPage = 4096;

std::atomic<std::uint64_t> g_syscalls{0};

Error classify(pid_t pid, int err, Address addr, std::size_t size) {
  switch (err) {
    case ESRCH:
      return {fmt::format("process {} exited", pid), ErrorCode::ProcessExited};
    case EPERM:
    case EACCES:
      // Whichever path read last, the other one was refused too (see move).
      return {permission_denied_message(pid, "read the memory of") + " " + both_paths_refused(pid),
              ErrorCode::PermissionDenied};
    default:
      return {fmt::format("cannot read {} bytes at {:#x} in process {}: {}", size, addr, pid,
                          std::strerror(err)),
              ErrorCode::Generic};
  }
}

}  // namespace

std::uint64_t ProcessMemory::total_syscalls() { return g_syscalls.load(std::memory_order_relaxed); }

Status ProcessMemory::read(Address addr, void* out, std::size_t size) const {
  Chunk chunk{addr, out, size};
  return read_many(std::span<const Chunk>(&chunk, 1));
}

const std::byte* ProcessMemory::cached(Address addr, std::size_t size) const {
  return sample_ ? sample_->find(addr, size) : nullptr;
}

std::span<const std::byte> ProcessMemory::cached_region(Address addr, std::size_t size,
                                                        Address& start) const {
  if (!sample_) return {};
  const auto span = sample_->find_region(addr, size);
  start = span.start;
  return {span.data, span.data ? span.size : 0};
}

void ProcessMemory::note(Address addr, std::size_t size) const {
  if (sample_) sample_->note(addr, size);
}

Status ProcessMemory::read_ahead(Address addr, void* out, std::size_t size) const {
  if (const std::byte* p = cached(addr, size)) {
    std::memcpy(out, p, size);
    return Ok{};
  }
  if (sample_) sample_->missed();
  Chunk chunk{addr, out, size};
  return transfer(std::span<const Chunk>(&chunk, 1));
}

void ProcessMemory::read_each(std::span<const Chunk> chunks, std::vector<char>& failed) const {
  failed.assign(chunks.size(), 0);
  if (chunks.empty() || read_many(chunks)) return;
  for (std::size_t i = 0; i < chunks.size(); ++i)
    if (!read(chunks[i].addr, chunks[i].out, chunks[i].size)) failed[i] = 1;
}

Status ProcessMemory::read_many(std::span<const Chunk> chunks) const {
  if (!sample_) return transfer(chunks);
  pending_.clear();
  for (const Chunk& c : chunks) {
    sample_->note(c.addr, c.size);
    if (const std::byte* p = sample_->find(c.addr, c.size)) {
      std::memcpy(c.out, p, c.size);
    } else {
      pending_.push_back(c);
    }
  }
  if (pending_.empty()) return Ok{};
  sample_->missed();
  return transfer(pending_);
}

namespace {

// One process_vm_readv of up to kMaxIov chunks; the bytes it moved, or -1 with errno.
ssize_t readv_once(pid_t pid, std::span<const ProcessMemory::Chunk> chunks, std::size_t& total) {
  std::array<iovec, kMaxIov> local, remote;
  total = 0;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    local[i] = {chunks[i].out, chunks[i].size};
    remote[i] = {reinterpret_cast<void*>(chunks[i].addr), chunks[i].size};
    total += chunks[i].size;
  }
  return process_vm_readv(pid, local.data(), chunks.size(), remote.data(), chunks.size(), 0);
}

}  // namespace

ProcessMemory::Moved ProcessMemory::move(std::span<const Chunk> chunks) const {
  Moved moved;
  if (source_) {
    ++syscalls_;  // one batch, as the process's would be one call
    moved.whole = source_->copy(chunks);
    return moved;
  }
  if (read_path() == ReadPath::ProcMem) return move_by_file(chunks);
  while (!chunks.empty()) {
    const std::size_t n = std::min(chunks.size(), kMaxIov);
    std::size_t total = 0;
    ++syscalls_;
    g_syscalls.fetch_add(1, std::memory_order_relaxed);
    const ssize_t got = readv_once(pid_, chunks.first(n), total);
    if (got < 0) {
      // EPERM for this process: /proc/PID/mem was refused as well (fall_back_after tried it).
      moved.error = fall_back_after(errno, pid_, file_);
      if (moved.error != 0) return moved;
      const Moved rest = move_by_file(chunks);
      return {moved.whole + rest.whole, rest.error};
    }
    // The chunks the transfer filled before it stopped (at an unmapped one).
    std::size_t done = static_cast<std::size_t>(got);
    std::size_t i = 0;
    while (i < n && done >= chunks[i].size) done -= chunks[i++].size;
    moved.whole += i;
    if (i < n) return moved;
    chunks = chunks.subspan(n);
  }
  return moved;
}

ProcessMemory::Moved ProcessMemory::move_by_file(std::span<const Chunk> chunks) const {
  Moved moved;
  std::uint64_t calls = 0;
  for (const Chunk& c : chunks) {
    const int err = file_.read(c.addr, c.out, c.size, calls);
    if (err != 0) {
      // Not mapped whole: the transfer stops there, as process_vm_readv's would.
      if (err != EFAULT) moved.error = err;
      break;
    }
    ++moved.whole;
  }
  syscalls_ += calls;
  g_syscalls.fetch_add(calls, std::memory_order_relaxed);
  return moved;
}

Status ProcessMemory::transfer(std::span<const Chunk> chunks) const {
  const Moved moved = move(chunks);
  if (moved.whole == chunks.size()) return Ok{};
  const Chunk& bad = chunks[moved.whole];
  if (moved.error != 0) return classify(pid_, moved.error, bad.addr, bad.size);
  return Error{fmt::format("short read of {} bytes at {:#x} in process {} (address not mapped)",
                           bad.size, bad.addr, pid_),
               ErrorCode::Generic};
}

std::size_t ProcessMemory::read_prefix(std::span<const Chunk> chunks) const {
  return move(chunks).whole;
}

Result<std::string> ProcessMemory::read_cstring_prefix(Address addr, std::size_t max_len) const {
  std::string out;
  char buf[256];
  while (out.size() < max_len) {
    // Never cross a page boundary in one read: the next page may be unmapped although the
    // string ends before it.
    std::size_t want = std::min<std::size_t>(sizeof buf, kPage - (addr % kPage));
    want = std::min(want, max_len - out.size());
    if (auto s = read(addr, buf, want); !s) return s.error();
    const void* nul = std::memchr(buf, '\0', want);
    if (nul) {
      out.append(buf, static_cast<std::size_t>(static_cast<const char*>(nul) - buf));
      return out;
    }
    out.append(buf, want);
    addr += want;
  }
  return out;
}

Result<std::string> ProcessMemory::read_cstring(Address addr, std::size_t max_len) const {
  // One byte more than allowed tells a string of max_len bytes from a longer one.
  auto out = read_cstring_prefix(addr, max_len + 1);
  if (out && out->size() > max_len)
    return Error{
        fmt::format("string at {:#x} in process {} longer than {} bytes", addr, pid_, max_len),
        ErrorCode::Generic};
  return out;
}

}  // namespace dapprof::sampler::process
