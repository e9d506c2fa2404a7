#pragma once
// Linux TIDs of threads known only by their pthread_t (Python 3.8-3.10 record no native thread id
// in PyThreadState). On glibc a pthread_t is the address of the thread's struct pthread, which
// holds the TID at a fixed offset; the offset is found once, by looking for the process's known
// TIDs in the structs of its threads, then read for every thread.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "sampler/process/memory.hpp"
#include "sampler/process/namespace_tids.hpp"

namespace dapprof::sampler::python {

class PthreadTids {
 public:
  // TIDs for `pthreads` (0 where unknown), given the TIDs the process has now. A struct pthread
  // holds its thread's TID in the process's PID namespace: with `ns`, `known` (host TIDs) are
  // looked for as the process knows them, and what is found is returned as the host's.
  std::vector<std::uint64_t> tids(const process::ProcessMemory& memory,
                                  const std::vector<std::uint64_t>& pthreads,
                                  const std::vector<pid_t>& known,
                                  process::NamespaceTids* ns = nullptr);

 private:
  std::optional<std::uint64_t> find_offset(const process::ProcessMemory& memory,
                                           const std::vector<std::uint64_t>& pthreads,
                                           const std::vector<pid_t>& known) const;
  std::optional<std::uint64_t> offset_;
};

}  // namespace dapprof::sampler::python
