#pragma once
// CPython 3.15's own sampling profiler ("tachyon": `python3.15 -m profiling.sampling attach`) as
// a peer of dapprof. Its interpreter is the one the command line names, as seen inside the
// target's root (the Debian unstable root holds the only 3.15 here), and it runs there through
// chroot: that needs root, and /proc mounted inside the root (it opens /proc/PID/maps there;
// without a PID namespace, pids inside are the host's). It reads only targets of its own version
// and says so when it cannot, which is how a target it cannot read is skipped.
//
// Its samples are what it says it captured ("Captured N samples in S seconds", S its sampling
// time); its CPU is the rusage of its process (chroot execs the interpreter, and wait4 counts the
// children it reaped too). Its start-up (an interpreter importing the profiler: about 0.2 s of CPU
// here, more than 1000 samples cost) is no part of a sample's cost, so CPU per sample is taken as
// it was when first measured: (CPU of a long run - a 1 s run) / (their samples' difference).
#include <fmt/format.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "sampler_peer.hpp"

namespace dapprof::bench {

// One run of it: what it printed, and what it cost.
struct TachyonRun {
  double samples = 0, seconds = 0;  // its "Captured N samples in S seconds"
  double cpu = 0;                   // user + system seconds of the whole process
};

class Tachyon {
 public:
  // `python`: CPython 3.15's interpreter as seen inside the roots it will run in.
  explicit Tachyon(std::string python) : python_(std::move(python)) {}
  ~Tachyon() {
    // Only the mounts this made: another user of the root may rely on one it found.
    for (const auto& p : mounted_) umount2(p.c_str(), MNT_DETACH);
  }
  Tachyon(const Tachyon&) = delete;
  Tachyon& operator=(const Tachyon&) = delete;

  // Readies it to run in `root` (mounting /proc there if it is not); an empty string if it can,
  // else why not. Its --help tells once per root whether it has --blocking.
  std::string enter(const std::string& root) {
    if (root.empty()) return "it runs in the target's root, and this target has none";
    if (geteuid() != 0) return "running it in the target's root takes chroot, which needs root";
    if (roots_.contains(root)) return "";
    const std::string proc = root + "/proc";
    struct statfs fs {};
    if (statfs(proc.c_str(), &fs) != 0 || fs.f_type != PROC_SUPER_MAGIC) {
      if (mount("proc", proc.c_str(), "proc", 0, nullptr) != 0)
        return fmt::format("cannot mount /proc in {}: {}", root, std::strerror(errno));
      mounted_.push_back(proc);
    }
    const auto help =
        output_of({"chroot", root, python_, "-m", "profiling.sampling", "attach", "--help"});
    if (!help || help->first.find("usage:") == std::string::npos)
      return fmt::format("{} in {} has no profiling.sampling (CPython 3.15's sampler)", python_,
                         root);
    roots_[root] = help->first.find("--blocking") != std::string::npos;
    return "";
  }

  // Whether its --help offers --blocking (all threads stopped for each sample): the counterpart
  // of dapprof's consistent mode. Only after enter(root) said yes.
  bool has_blocking(const std::string& root) const {
    const auto it = roots_.find(root);
    return it != roots_.end() && it->second;
  }

  // It sampling `pid` at `rate` (1,000,000: as fast as it goes) for `seconds` (it takes whole
  // seconds). nullopt when it captured nothing, with the last line it printed in `*why`.
  std::optional<TachyonRun> run(const std::string& root, pid_t pid, double rate, bool blocking,
                                int seconds, std::string* why = nullptr) const {
    std::vector<std::string> argv{"chroot", root, python_, "-m", "profiling.sampling", "attach",
                                  "-r", fmt::format("{:.0f}", rate), "-d", std::to_string(seconds),
                                  // its pstats summary would cost CPU at the end, after sampling
                                  "--collapsed", "-o", "/dev/null"};
    if (blocking) argv.push_back("--blocking");
    argv.push_back(std::to_string(pid));
    const auto out = output_of(argv);
    std::smatch m;
    static const std::regex captured(R"(Captured (\d+) samples in ([0-9.]+) seconds)");
    if (!out || !std::regex_search(out->first, m, captured) || std::stod(m[1]) <= 0) {
      if (why) *why = out ? last_line(out->first) : "it did not start";
      return std::nullopt;
    }
    return TachyonRun{std::stod(m[1]), std::stod(m[2]), out->second};
  }

  // It sampling the process tree of `pid` (--subprocesses: a profiler process of its own for
  // each child, each writing its samples to a file of its own) at `rate` for `seconds`. Its
  // samples are read from those files (collapsed stacks, `STACK COUNT`), by process; the files
  // are removed. CPU is that of the whole tree of its processes it reaped.
  struct PoolRun {
    double cpu = 0;
    std::map<pid_t, double> samples;   // by target pid (the parent's under `pid`)
    std::map<pid_t, double> spinning;  // of those, samples whose stack holds `marker`
  };
  std::optional<PoolRun> run_pool(const std::string& root, pid_t pid, double rate, int seconds,
                                  const std::string& marker, std::string* why = nullptr) const {
    namespace fs = std::filesystem;
    const std::string base = "/tmp/dapprof-bench-tachyon-pool";
    const auto out =
        output_of({"chroot", root, python_, "-m", "profiling.sampling", "attach", "--subprocesses",
                   "-r", fmt::format("{:.0f}", rate), "-d", std::to_string(seconds), "--collapsed",
                   "-o", base + ".txt", std::to_string(pid)});
    if (!out) {
      if (why) *why = "it did not start";
      return std::nullopt;
    }
    PoolRun run;
    run.cpu = out->second;
    const fs::path dir = root + "/tmp";
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const auto name = entry.path().filename().string();
      if (!name.starts_with("dapprof-bench-tachyon-pool")) continue;
      // "...pool.txt" is the parent's, "...pool_PID.txt" a child's.
      const auto under = name.find('_');
      const pid_t of = under == std::string::npos
                           ? pid
                           : static_cast<pid_t>(std::atol(name.c_str() + under + 1));
      std::ifstream in(entry.path());
      for (std::string line; std::getline(in, line);) {
        const auto space = line.rfind(' ');
        if (space == std::string::npos) continue;
        const double count = std::atof(line.c_str() + space + 1);
        run.samples[of] += count;
        if (line.find(marker) != std::string::npos) run.spinning[of] += count;
      }
      fs::remove(entry.path(), ec);
    }
    if (run.samples.empty()) {
      if (why) *why = last_line(out->first);
      return std::nullopt;
    }
    return run;
  }

  // Its stack reader alone (_remote_debugging.RemoteUnwinder, every thread, wall mode) called in a
  // loop for `seconds`, as dapprof's flat-out figures are its sampler alone: no collector. With
  // `cache_frames` (what its profiler asks for) the reader writes the address of the top frame it
  // read into the target's thread state after each sample (last_profiled_frame, which the
  // interpreter moves to the caller when that frame returns), and reads next time only the frames
  // above it, taking the rest from its cache; without, it reads every frame each time, as a
  // reader that writes nothing into the program must. Samples per second and CPU per sample.
  std::optional<Figures> unwinder(const std::string& root, pid_t pid, double seconds,
                                  bool cache_frames, std::string* why = nullptr) const {
    static constexpr const char* kLoop =
        "import resource, sys, time, _remote_debugging as r\n"
        "pid, seconds, cache = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3] == '1'\n"
        "u = r.RemoteUnwinder(pid, all_threads=True, cache_frames=cache)\n"
        "u.get_stack_trace()\n"
        "def cpu():\n"
        "    ru = resource.getrusage(resource.RUSAGE_SELF)\n"
        "    return ru.ru_utime + ru.ru_stime\n"
        "n, failed, c0, t0 = 0, 0, cpu(), time.monotonic()\n"
        "while time.monotonic() - t0 < seconds:\n"
        "    try:\n"
        "        u.get_stack_trace()\n"
        "        n += 1\n"
        "    except Exception:\n"
        "        failed += 1\n"
        "print('unwound', n, 'failed', failed, 'seconds', time.monotonic() - t0, 'cpu', cpu() - "
        "c0)\n";
    const auto out = output_of({"chroot", root, python_, "-c", kLoop, std::to_string(pid),
                                fmt::format("{}", seconds), cache_frames ? "1" : "0"});
    std::smatch m;
    static const std::regex unwound(
        R"(unwound (\d+) failed (\d+) seconds ([0-9.e-]+) cpu ([0-9.e-]+))");
    if (!out || !std::regex_search(out->first, m, unwound) || std::stod(m[1]) <= 0) {
      if (why) *why = out ? last_line(out->first) : "it did not start";
      return std::nullopt;
    }
    const double n = std::stod(m[1]);
    Figures f;
    f.samples_per_s = n / std::stod(m[3]);
    f.cpu_us_per_sample = std::stod(m[4]) * 1e6 / n;
    return f;
  }

  // Figures as dapprof's runs give them: paced, CPU per sample is the marginal one of a 1 s run
  // and a 1 + `seconds` s run made one after the other; flat out, only its rate is compared, from
  // one run (CPU per sample there includes its start-up).
  std::optional<Figures> measure(const std::string& root, pid_t pid, double rate, bool blocking,
                                 double seconds, std::string* why = nullptr) const {
    const int whole = std::max(1, static_cast<int>(std::lround(seconds)));
    const bool paced = rate < 1'000'000;
    std::optional<TachyonRun> one;
    if (paced && !(one = run(root, pid, rate, blocking, 1, why))) return std::nullopt;
    const auto many = run(root, pid, rate, blocking, paced ? 1 + whole : whole, why);
    if (!many) return std::nullopt;
    Figures f;
    f.asked = paced ? rate : 0;
    f.samples_per_s = many->samples / many->seconds;
    const double samples = one ? many->samples - one->samples : many->samples;
    const double cpu = one ? many->cpu - one->cpu : many->cpu;
    const double wall = one ? many->seconds - one->seconds : many->seconds;
    if (samples <= 0) {
      if (why) *why = "a longer run captured no more samples than a 1 s run";
      return std::nullopt;
    }
    f.cpu_us_per_sample = cpu * 1e6 / samples;
    f.core_percent = wall > 0 ? 100 * cpu / wall : 0;
    return f;
  }

 private:
  // What a command printed (stdout and stderr) and its CPU seconds.
  static std::optional<std::pair<std::string, double>> output_of(
      const std::vector<std::string>& argv) {
    char path[] = "/tmp/dapprof-bench-tachyon-XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0) return std::nullopt;
    close(fd);
    PeerProcess p(argv, path);
    const auto cpu = p.wait();
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    std::remove(path);
    if (!cpu) return std::nullopt;
    return std::pair{std::move(text), *cpu};
  }
  static std::string last_line(const std::string& text) {
    const auto end = text.find_last_not_of("\n ");
    if (end == std::string::npos) return "it printed nothing";
    const auto nl = text.rfind('\n', end);
    const auto begin = nl == std::string::npos ? 0 : nl + 1;
    return text.substr(begin, end + 1 - begin);
  }

  std::string python_;
  std::map<std::string, bool> roots_;  // roots entered, and whether it has --blocking there
  std::vector<std::string> mounted_;
};

}  // namespace dapprof::bench
