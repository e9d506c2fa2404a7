#pragma once
// Thread names as the threading module knows them: threading._active maps each thread's ident to
// its Thread object, whose _name attribute is the name. Reading that takes dozens of reads, so the
// names are cached per thread id and refreshed only when an id never seen before appears or every
// kRefresh (threads can be renamed; thread ids are reused).
#include <chrono>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/result.hpp"
#include "sampler/python/objects.hpp"

namespace dapprof::sampler::python {

class ThreadNames {
 public:
  static constexpr std::chrono::milliseconds kRefresh{1000};
  // Unknown ids trigger a refresh at most this often (a thread not registered with threading,
  // e.g. started with _thread.start_new_thread, stays unknown).
  static constexpr std::chrono::milliseconds kRetryUnknown{100};

  explicit ThreadNames(const Objects& objects) : objects_(objects) {}

  // Refreshes if needed; failures leave the previous names in place (names are best effort).
  void update(Address interp, const std::vector<std::uint64_t>& thread_ids);
  std::string name(std::uint64_t thread_id) const;

 private:
  Status refresh(Address interp);
  Result<Address> active_dict(Address interp);

  const Objects& objects_;
  std::unordered_map<std::uint64_t, std::string> names_;
  std::unordered_set<std::uint64_t> unnamed_;  // not in threading._active at the last refresh
  Address active_ = 0;                         // threading._active, once found
  std::chrono::steady_clock::time_point last_refresh_{};
};

}  // namespace dapprof::sampler::python
