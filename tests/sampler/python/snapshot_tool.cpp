// Test tool: attaches to a PID with PythonProcess and prints what snapshot() reads, as JSON, for
// the pytest suite next to it.
//   sampler_snapshot_tool PID                 one snapshot (JSON object) or {"error", "code"}
//   sampler_snapshot_tool PID --count N       N snapshots; prints {"ok", "errors": {code: n}}
//   sampler_snapshot_tool PID --until-exit    samples until the process is gone; prints the
//                                             counts and the final error code
//   --nonblocking, --native, --wait-ms MS, --time   (--time adds CPU microseconds per snapshot)
//   --skip-idle                               idle threads neither walked nor kept (the live
//                                             path's default); --count then also prints the
//                                             last snapshot's thread count and the read plan's
//                                             regions
//   --until-thread NAME                       samples until a snapshot shows thread NAME with
//                                             frames (10 s at most); prints {"found", "ms",
//                                             "snapshots", "seen_before"}
#include <CLI/CLI.hpp>
#include <chrono>
#include <ctime>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "formats/snapshot_json.hpp"
#include "sampler/sampler.hpp"

namespace {

using dapprof::ErrorCode;
using Json = nlohmann::ordered_json;

const char* code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::Generic:
      return "Generic";
    case ErrorCode::InvalidArgument:
      return "InvalidArgument";
    case ErrorCode::NoSuchProcess:
      return "NoSuchProcess";
    case ErrorCode::ProcessExited:
      return "ProcessExited";
    case ErrorCode::PermissionDenied:
      return "PermissionDenied";
    case ErrorCode::NotPython:
      return "NotPython";
    case ErrorCode::UnsupportedVersion:
      return "UnsupportedVersion";
    case ErrorCode::TornRead:
      return "TornRead";
    case ErrorCode::OutputFailed:
      return "OutputFailed";
  }
  return "?";
}

Json snapshot_json(const dapprof::model::Snapshot& snap, const std::string& version) {
  return dapprof::formats::snapshot_to_json(snap, version);
}

double cpu_us() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Prints PythonProcess snapshots of a process as JSON"};
  pid_t pid = 0;
  int count = 0;
  int wait_ms = 0;
  bool nonblocking = false;
  bool until_exit = false;
  bool time = false;
  bool native = false;
  bool skip_idle = false;
  std::string until_thread;
  app.add_option("pid", pid)->required();
  app.add_option("--until-thread", until_thread);
  app.add_option("--count", count);
  app.add_option("--wait-ms", wait_ms);
  app.add_flag("--nonblocking", nonblocking);
  app.add_flag("--until-exit", until_exit);
  app.add_flag("--time", time);
  app.add_flag("--native", native);
  app.add_flag("--skip-idle", skip_idle);
  CLI11_PARSE(app, argc, argv);

  dapprof::sampler::AttachOptions options;
  options.nonblocking = nonblocking;
  options.native = native;
  options.skip_idle = skip_idle;
  options.wait_for_interpreter = std::chrono::milliseconds(wait_ms);
  auto process = dapprof::sampler::PythonProcess::attach(pid, options);
  if (!process) {
    std::cout << Json{{"error", process.message()}, {"code", code_name(process.code())}}.dump()
              << "\n";
    return 2;
  }
  auto& p = **process;
  if (!until_thread.empty()) {
    // Every thread shown before NAME (there should be none while the program sleeps).
    std::set<std::string> seen_before;
    const auto start = std::chrono::steady_clock::now();
    int snapshots = 0;
    bool found = false;
    while (!found && std::chrono::steady_clock::now() - start < std::chrono::seconds(10)) {
      auto snap = p.snapshot();
      ++snapshots;
      if (!snap) continue;
      for (const auto& t : snap->threads) {
        if (t.frames.empty()) continue;
        if (t.info.name == until_thread)
          found = true;
        else
          seen_before.insert(t.info.name);
      }
    }
    const auto ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start);
    std::cout << Json{{"found", found},
                      {"ms", ms.count()},
                      {"snapshots", snapshots},
                      {"seen_before", seen_before}}
                     .dump()
              << "\n";
    return found ? 0 : 1;
  }
  if (count == 0 && !until_exit) {
    const double start = cpu_us();
    auto snap = p.snapshot();
    const double used = cpu_us() - start;
    if (!snap) {
      std::cout << Json{{"error", snap.message()}, {"code", code_name(snap.code())}}.dump() << "\n";
      return 2;
    }
    Json out = snapshot_json(*snap, p.python_version());
    if (time) out["cpu_us"] = used;
    std::cout << out.dump() << "\n";
    return 0;
  }
  std::map<std::string, int> errors;
  int ok = 0;
  std::string last_code;
  std::string last_message;
  std::size_t last_threads = 0;
  const double start = cpu_us();
  for (int i = 0; until_exit || i < count; ++i) {
    auto snap = p.snapshot();
    if (snap) {
      ++ok;
      last_threads = snap->threads.size();
      continue;
    }
    last_code = code_name(snap.code());
    last_message = snap.message();
    ++errors[last_code];
    if (snap.code() == ErrorCode::ProcessExited) break;
    if (until_exit && errors[last_code] > 100000) break;  // never spin forever
  }
  Json out{{"python_version", p.python_version()},
           {"ok", ok},
           {"errors", errors},
           {"last_error", last_code},
           {"exited", p.exited()}};
  if (skip_idle) {
    out["last_threads"] = last_threads;
    out["plan_regions"] = p.read_plan().size();
  }
  const auto reads = p.read_counts();
  out["reads"] = {
      {"first_reads", reads.first_reads},
      {"retries", reads.retries},
      {"paused", reads.paused},
      {"stopped_us", std::chrono::duration_cast<std::chrono::microseconds>(reads.stopped).count()}};
  if (time && ok + static_cast<int>(errors.size()) > 0) {
    out["cpu_us_per_snapshot"] = (cpu_us() - start) / std::max(1, count ? count : ok);
  }
  std::cout << out.dump() << "\n";
  return 0;
}
