#pragma once
// dapprof's side of the sampler benchmark: its sampler run on a target for a while, and a loop
// making only the reads one sample needs (what the hardware allows a sampler reading what dapprof
// reads).
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "../common/harness.hpp"
#include "../common/syscall_counter.hpp"
#include "sampler/process/memory.hpp"
#include "sampler/sampler.hpp"
#include "sampler_peer.hpp"
#include "target.hpp"

namespace dapprof::bench {

// dapprof sampling `pid` at `rate` for `seconds`. With `progress` and `work`, the program's work
// rate while sampled is measured from 200 ms in and put in `*work`. `opcodes`: each frame's
// instruction read too (record --opcodes). `gc`: the collector's state read too, for its frame
// (the default; false: --no-gc).
inline std::optional<Figures> run_dapprof(pid_t pid, double rate, bool nonblocking, double seconds,
                                          Progress* progress = nullptr,
                                          std::optional<double>* work = nullptr,
                                          bool opcodes = false, bool gc = true) {
  using namespace dapprof::sampler;
  using Clock = std::chrono::steady_clock;
  std::mutex m;
  std::condition_variable cv;
  bool stopped = false;
  double cpu = 0;
  std::uint64_t frames = 0, snaps = 0;
  // Opened on the sampling thread by its first snapshot: the calls of every later sample.
  std::optional<SyscallCounter> calls;
  std::optional<std::uint64_t> counted;
  std::uint64_t counted_from = 0;
  const auto reads_before = process::ProcessMemory::total_syscalls();
  SamplerOptions opts{.sampling = {.rate_hz = rate, .nonblocking = nonblocking}};
  opts.opcodes = opcodes;
  opts.sampling.gc = gc;
  const auto begin = Clock::now();
  auto sampler = Sampler::start(
      pid, opts,
      [&](dapprof::model::Snapshot&& s) {
        ++snaps;
        for (const auto& t : s.threads) frames += t.frames.size();
        if (!calls) {
          calls.emplace();
          counted_from = snaps;
        }
      },
      [&](StopReason, const std::string&) {
        std::lock_guard lock(m);
        cpu = thread_cpu_seconds();  // the sampling thread's whole life
        if (calls) counted = calls->count();
        stopped = true;
        cv.notify_all();
      });
  if (!sampler) {
    fmt::print("  cannot sample: {}\n", sampler.message());
    return std::nullopt;
  }
  if (progress && work) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    *work = work_rate(*progress, seconds);
  } else {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  }
  (*sampler)->stop();
  const double wall = std::chrono::duration<double>(Clock::now() - begin).count();
  std::unique_lock lock(m);
  cv.wait(lock, [&] { return stopped; });
  const auto stats = (*sampler)->stats();
  Figures f;
  const double reads = static_cast<double>(stats.samples + stats.errors);
  f.asked = rate;
  f.samples_per_s = static_cast<double>(stats.samples) / wall;
  f.cpu_us_per_sample = reads > 0 ? cpu * 1e6 / reads : 0;
  f.core_percent = 100 * cpu / wall;
  f.reads_per_sample =
      reads > 0
          ? static_cast<double>(process::ProcessMemory::total_syscalls() - reads_before) / reads
          : 0;
  // Errors are ticks too; the sample that opened the counter made its calls before.
  const double after = reads - static_cast<double>(counted_from);
  if (counted && after > 0) f.syscalls_per_sample = static_cast<double>(*counted) / after;
  f.frames = snaps ? static_cast<double>(frames) / static_cast<double>(snaps) : 0;
  f.failed = reads > 0 ? 100.0 * static_cast<double>(stats.errors) / reads : 0;
  const auto& c = stats.reads;
  const double consistent = static_cast<double>(c.first_reads + c.paused);
  if (!nonblocking && consistent > 0) {
    f.retried = 100.0 * static_cast<double>(c.retries) / consistent;
    f.paused = 100.0 * static_cast<double>(c.paused) / consistent;
  }
  f.stopped = 100.0 * std::chrono::duration<double>(c.stopped).count() / wall;
  return f;
}

// The system calls one consistent sample makes, in a loop and nothing else: the fetch of its
// plan, the re-read of the thread's top frame, the thread's kernel state.
inline std::optional<Figures> reads_only(pid_t pid, double seconds) {
  using namespace dapprof::sampler;
  using Clock = std::chrono::steady_clock;
  auto proc = PythonProcess::attach(pid, AttachOptions{.nonblocking = true});
  if (!proc) return std::nullopt;
  for (int i = 0; i < 20; ++i) (void)(*proc)->snapshot();
  const auto plan = (*proc)->read_plan();
  std::size_t bytes = 0;
  for (const auto& [addr, size] : plan) bytes += size;
  std::vector<std::byte> buffer(bytes);
  std::vector<process::ProcessMemory::Chunk> chunks;
  std::size_t offset = 0;
  for (const auto& [addr, size] : plan) {
    chunks.push_back({addr, buffer.data() + offset, size});
    offset += size;
  }
  if (chunks.empty()) return std::nullopt;
  std::uint64_t top = 0;
  const process::ProcessMemory::Chunk again{chunks.back().addr, &top, sizeof top};
  const int stat = ::open(fmt::format("/proc/{}/task/{}/stat", pid, pid).c_str(), O_RDONLY);
  if (stat < 0) return std::nullopt;
  char line[512];
  process::ProcessMemory memory(pid);
  const SyscallCounter calls;
  const auto calls0 = calls.count();
  const double cpu0 = thread_cpu_seconds();
  const auto begin = Clock::now();
  const auto end = begin + std::chrono::duration<double>(seconds);
  std::uint64_t n = 0;
  bool ok = true;
  while (ok && Clock::now() < end) {
    ok = memory.read_many(chunks) && memory.read(again.addr, again.out, again.size) &&
         ::pread(stat, line, sizeof line, 0) > 0;
    ++n;
  }
  ::close(stat);
  if (!ok) return std::nullopt;
  const double wall = std::chrono::duration<double>(Clock::now() - begin).count();
  Figures f;
  f.samples_per_s = static_cast<double>(n) / wall;
  f.cpu_us_per_sample = (thread_cpu_seconds() - cpu0) * 1e6 / static_cast<double>(n);
  f.core_percent = 100 * (thread_cpu_seconds() - cpu0) / wall;
  f.reads_per_sample = 2;
  if (const auto calls1 = calls.count(); calls0 && calls1)
    f.syscalls_per_sample = static_cast<double>(*calls1 - *calls0) / static_cast<double>(n);
  f.plan_regions = plan.size();
  f.plan_bytes = bytes;
  return f;
}

}  // namespace dapprof::bench
