// `dapprof top`: a live table of where a Python program spends its time (like py-spy top). The
// sampler fills a TopAggregator on its thread; the main thread takes a frame of it every second,
// draws it, and reads keys, resizes and stop signals in between.
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <thread>

#include "app/cli/child.hpp"
#include "app/cli/log_capture.hpp"
#include "app/cli/options.hpp"
#include "app/cli/proc_info.hpp"
#include "app/cli/sampling_flags.hpp"
#include "app/cli/sampling_target.hpp"
#include "app/cli/short_filenames.hpp"
#include "app/cli/signals.hpp"
#include "app/cli/terminal.hpp"
#include "app/cli/top_screen.hpp"
#include "formats/top_table.hpp"
#include "sampler/sampler.hpp"

namespace dapprof::app::cli {
namespace {

using Clock = std::chrono::steady_clock;
using sampler::StopReason;
using namespace std::chrono_literals;

constexpr auto kRefresh = 1s;
constexpr auto kTick = 100ms;  // how soon the loop notices the sampler stopped
constexpr auto kChildGrace = 1s;

// What the sampling thread shares with the main thread.
struct Watch {
  explicit Watch(double interval_seconds) : aggregator(interval_seconds) {}
  std::mutex mutex;
  formats::TopAggregator aggregator;              // guarded by mutex
  std::optional<ShortFilenames> short_filenames;  // unless --full-filenames; guarded by mutex
  std::atomic<bool> stopped{false};
  StopReason reason = StopReason::Requested;  // guarded by mutex, valid once stopped
  std::string message;
};

// The target, the sampler on it, and what the header says about them.
struct Session {
  explicit Session(SamplingTarget t) : target(std::move(t)) {}
  SamplingTarget target;
  std::unique_ptr<Watch> watch;
  std::unique_ptr<sampler::Sampler> sampler;
  TopHeader header;
  Clock::time_point start;

  formats::TopFrame take() {
    std::lock_guard lock(watch->mutex);
    return watch->aggregator.take();
  }
  // Once the sampler has stopped: the header's target state. Only then may the child be waited
  // for, as a wait while the sampler traces it could take the sampler's ptrace notifications.
  void finish() {
    sampler->stop();
    header.errors = sampler->stats().errors;
    std::lock_guard lock(watch->mutex);
    if (watch->reason == StopReason::Error) {
      header.target = TargetState::Failed;
      header.target_note = watch->message;
      return;
    }
    header.target = TargetState::Exited;
    auto& child = target.child;
    if (child && child->poll()) header.target_note = fmt::format("with status {}", child->wait());
  }
  void stop_child() {
    auto& child = target.child;
    if (!child || child->poll()) return;
    child->signal(SIGTERM);
    const auto until = Clock::now() + kChildGrace;
    while (!child->poll() && Clock::now() < until) std::this_thread::sleep_for(20ms);
    // ~Child kills what is left.
  }
};

Result<Session> start(const TopOptions& o, ChildIo io) {
  auto target = open_target(o.pid, o.command, io);
  if (!target) return target.error();
  Session s(std::move(*target));
  s.header.pid = s.target.pid;
  s.header.command = s.target.name;
  s.header.rate_hz = o.sampling.rate_hz;
  s.watch = std::make_unique<Watch>(1.0 / o.sampling.rate_hz);
  s.start = Clock::now();
  auto* watch = s.watch.get();
  if (!o.full_filenames) watch->short_filenames.emplace();
  auto sampling = start_sampler(
      s.target, sampler_options(s.target, o.sampling, o.native_all),
      [watch](model::Snapshot&& snap) {
        if (snap.process_exited) return;  // not a sample
        std::lock_guard lock(watch->mutex);
        if (auto& names = watch->short_filenames) {
          names->open_root(snap.pid);
          for (auto& thread : snap.threads)
            for (auto& frame : thread.frames) frame.file = (*names)(frame.file);
        }
        watch->aggregator.add(snap);
      },
      [watch](StopReason reason, const std::string& message) {
        {
          std::lock_guard lock(watch->mutex);
          watch->reason = reason;
          watch->message = message;
        }
        watch->stopped.store(true);
      });
  if (!sampling) return sampling.error();
  s.sampler = std::move(*sampling);
  s.header.python_version = s.sampler->python_version();
  s.header.warning = s.sampler->warning();
  s.header.threads = thread_count(s.header.pid);
  return s;
}

void apply(Key key, TopView& view) {
  using formats::TopSort;
  switch (key) {
    case Key::SortOwnShare:
      view.sort = TopSort::OwnShare;
      break;
    case Key::SortTotalShare:
      view.sort = TopSort::TotalShare;
      break;
    case Key::SortOwnTime:
      view.sort = TopSort::OwnTime;
      break;
    case Key::SortTotalTime:
      view.sort = TopSort::TotalTime;
      break;
    case Key::ToggleLines:
      view.grouping = view.grouping == formats::TopGrouping::Line ? formats::TopGrouping::Function
                                                                  : formats::TopGrouping::Line;
      break;
    case Key::Pause:
      view.display =
          view.display == DisplayState::Paused ? DisplayState::Live : DisplayState::Paused;
      break;
    case Key::Quit:
      break;
  }
}

// The live screen until q, Ctrl-C, SIGINT/SIGTERM or the terminal closing.
int run_live(Session& s, Terminal& terminal, const StopSignals& signals, const LogCapture& logs) {
  TopView view;
  auto frame = s.take();
  auto next_refresh = Clock::now() + kRefresh;
  bool dirty = true;
  while (true) {
    if (s.header.target == TargetState::Running && s.watch->stopped.load()) {
      s.finish();
      // The samples since the last refresh, unless there were none: then the last full window
      // says more than an empty one.
      auto last = s.take();
      if (view.display == DisplayState::Live &&
          (last.window_thread_samples > 0 || frame.samples == 0)) {
        frame = std::move(last);
      }
      s.header.elapsed = Clock::now() - s.start;
      dirty = true;
    }
    const auto now = Clock::now();
    if (now >= next_refresh) {
      next_refresh += kRefresh;
      if (next_refresh <= now) next_refresh = now + kRefresh;  // after a stall: no burst
      if (s.header.target == TargetState::Running) {
        s.header.elapsed = now - s.start;
        s.header.errors = s.sampler->stats().errors;
        if (auto n = thread_count(s.header.pid)) s.header.threads = n;
        if (view.display == DisplayState::Live) {
          frame = s.take();
          dirty = true;
        }
      }
      if (auto w = logs.latest(); !w.empty() && w != s.header.warning) {
        s.header.warning = std::move(w);
        dirty = true;
      }
    }
    if (dirty) {
      terminal.draw(
          screen_lines(s.header, frame, view, static_cast<std::size_t>(terminal.size().rows)));
      dirty = false;
    }
    const auto wait = std::min<Clock::duration>(kTick, next_refresh - Clock::now());
    const auto input = terminal.wait(std::chrono::ceil<std::chrono::milliseconds>(wait));
    if (signals.wait(0ms) || input.closed) return 0;
    for (const auto key : input.keys) {
      if (key == Key::Quit) return 0;
      apply(key, view);
      dirty = true;
    }
    dirty = dirty || input.resized;
  }
}

// Not a terminal: sample until the target exits or a signal, then print the table once.
int run_plain(Session& s, const StopSignals& signals) {
  std::optional<int> got_signal;
  while (!s.watch->stopped.load()) {
    if ((got_signal = signals.wait(kTick))) break;
  }
  s.sampler->stop();
  s.header.elapsed = Clock::now() - s.start;
  s.header.errors = s.sampler->stats().errors;
  const auto frame = s.take();  // one window: the whole run
  for (const auto& line : plain_lines(s.header, frame, {.sort = formats::TopSort::OwnTime})) {
    fmt::print("{}\n", line);
  }
  std::fflush(stdout);
  int code = 0;
  if (got_signal) {
    fmt::print(stderr, "dapprof> Stopped sampling: interrupted.\n");
  } else if (std::lock_guard lock(s.watch->mutex); s.watch->reason == StopReason::Error) {
    fmt::print(stderr, "dapprof: error: {}\n", s.watch->message);
    code = 1;
  } else {
    fmt::print(stderr, "dapprof> Stopped sampling: process {} exited.\n", s.header.pid);
  }
  if (s.target.child) {
    if (got_signal) s.stop_child();
    const int child_code = s.target.child->wait();
    if (code == 0) code = child_code;
  }
  return code;
}

}  // namespace

int run_top(const TopOptions& o) {
  if (const auto conflict = sampling_conflict(o.sampling, o.native_all)) {
    fmt::print(stderr, "dapprof: error: {}\n", *conflict);
    return 2;
  }
  // Both before any thread exists, so that every thread inherits the signal masks.
  const StopSignals signals;
  std::unique_ptr<Terminal> terminal;
  if (isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1) {
    auto opened = Terminal::open();
    if (!opened) {
      fmt::print(stderr, "dapprof: error: {}\n", opened.message());
      return 1;
    }
    terminal = std::move(*opened);
  }
  // From before the sampler starts until after it stopped: its thread logs too.
  std::optional<LogCapture> logs;
  if (terminal) logs.emplace();
  auto session = start(o, terminal ? ChildIo::Null : ChildIo::Inherit);
  if (!session) {
    terminal.reset();  // the message must land on the shell's screen, not the alternate one
    logs.reset();
    fmt::print(stderr, "dapprof: error: {}\n", session.message());
    return 1;
  }
  if (!terminal) return run_plain(*session, signals);

  int code = 0;
  std::string failure;
  try {
    code = run_live(*session, *terminal, signals, *logs);
  } catch (const std::exception& e) {
    failure = e.what();
    code = 1;
  }
  terminal.reset();
  session->sampler->stop();
  logs.reset();
  session->stop_child();
  if (!failure.empty()) fmt::print(stderr, "dapprof: error: {}\n", failure);
  if (session->header.target == TargetState::Failed) {
    fmt::print(stderr, "dapprof: error: {}\n", session->header.target_note);
    code = 1;
  }
  return code;
}

}  // namespace dapprof::app::cli
