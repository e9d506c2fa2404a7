#pragma once
// The memory of a recording as it runs: `dapprof record --pid` (consistent and nonblocking) and
// austin, side by side on one program for the same time, their RSS read 10 s in and at the end.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "../common/rss.hpp"
#include "sampler_peer.hpp"
#include "summary.hpp"

namespace dapprof::bench {

inline std::map<std::string, RssFigures> rss_run(const std::string& dapprof,
                                                 const std::optional<std::string>& austin,
                                                 pid_t target, double seconds) {
  using Clock = std::chrono::steady_clock;
  const int whole = static_cast<int>(seconds);
  const std::string out = fmt::format("/tmp/dapprof-bench-rss-{}", ::getpid());
  std::map<std::string, std::unique_ptr<PeerProcess>> runs;
  for (const char* who : {"consistent", "nonblocking"}) {
    std::vector<std::string> argv{dapprof,          "record", "--pid", std::to_string(target),
                                  "--rate",         "1000",   "-d",    std::to_string(whole),
                                  "--hideprogress", "-f",     "raw",   "-o",
                                  out + "-" + who};
    if (std::string(who) == "nonblocking") argv.push_back("--nonblocking");
    runs[who] = std::make_unique<PeerProcess>(argv);
  }
  if (austin)
    runs["austin"] =
        std::make_unique<PeerProcess>(austin_argv(*austin, target, 1000, whole, out + "-austin"));
  const auto begin = Clock::now();
  const auto rss_all = [&] {
    std::map<std::string, long> kib;
    for (const auto& [who, p] : runs)
      if (const auto r = rss_kib(p->pid())) kib[who] = *r;
    return kib;
  };
  const double first = std::min(10.0, seconds / 6);
  std::this_thread::sleep_until(begin + std::chrono::duration<double>(first));
  const auto early = rss_all();
  const auto t0 = Clock::now();
  std::this_thread::sleep_until(begin + std::chrono::duration<double>(whole - 0.5));
  const auto late = rss_all();
  const double span = std::chrono::duration<double>(Clock::now() - t0).count();
  std::map<std::string, RssFigures> figures;
  for (const auto& [who, kib] : late) {
    RssFigures f;
    f.mib = static_cast<double>(kib) / 1024;
    if (early.contains(who)) f.growth_kib_s = static_cast<double>(kib - early.at(who)) / span;
    figures[who] = f;
  }
  for (auto& [who, p] : runs) p->wait();
  for (const auto& [who, p] : runs) std::remove((out + "-" + who).c_str());
  return figures;
}

}  // namespace dapprof::bench
