#pragma once
// What this machine lets a sampler that sleeps between ticks reach, whatever it reads: a loop
// that samples nothing, only sleeps to each tick as dapprof's loop does (its schedule, which drops
// a tick woken more than a period late, its wait, and a timer slack of 1 ns), on a thread of its
// own.
// Its achieved rate is the ceiling of any such sampler here, and its CPU per tick what the
// sleep and the wake alone cost.
#include <sys/prctl.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "../common/harness.hpp"
#include "../common/syscall_counter.hpp"
#include "sampler/loop/schedule.hpp"
#include "sampler/loop/stop_flag.hpp"
#include "sampler_peer.hpp"

namespace dapprof::bench {

struct SleepOnly {
  Figures figures;
  double late_p50_us = 0, late_p99_us = 0;  // how long after the time asked the wakes came
};

inline SleepOnly sleep_only(double rate, double seconds) {
  using Clock = std::chrono::steady_clock;  // CLOCK_MONOTONIC
  SleepOnly out;
  std::thread([&] {
    ::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    std::vector<double> late;
    const SyscallCounter calls;
    const auto calls0 = calls.count();
    const double cpu0 = thread_cpu_seconds();
    const auto begin = Clock::now();
    const auto end = begin + std::chrono::duration<double>(seconds);
    sampler::loop::Schedule schedule(begin, rate);
    std::uint64_t ticks = 0;
    const sampler::loop::StopFlag never;  // never raised: each wait lasts until its tick
    for (auto now = begin; now < end; ++ticks, schedule.advance(now)) {
      const auto due = schedule.next();
      never.wait_until(due);
      now = Clock::now();
      late.push_back(std::chrono::duration<double, std::micro>(now - due).count());
    }
    const double wall = std::chrono::duration<double>(Clock::now() - begin).count();
    const double cpu = thread_cpu_seconds() - cpu0;
    const auto calls1 = calls.count();
    auto& f = out.figures;
    f.asked = rate;
    f.samples_per_s = static_cast<double>(ticks) / wall;
    f.cpu_us_per_sample = ticks ? cpu * 1e6 / static_cast<double>(ticks) : 0;
    f.core_percent = 100 * cpu / wall;
    if (calls0 && calls1 && ticks)
      f.syscalls_per_sample = static_cast<double>(*calls1 - *calls0) / static_cast<double>(ticks);
    std::sort(late.begin(), late.end());
    if (!late.empty()) {
      out.late_p50_us = late[late.size() / 2];
      out.late_p99_us = late[late.size() * 99 / 100];
    }
  }).join();
  return out;
}

}  // namespace dapprof::bench
