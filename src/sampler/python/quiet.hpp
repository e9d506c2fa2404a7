#pragma once
// A process whose every thread sleeps, with the GIL free (most debugged programs, most of the
// time): until one of its threads is due to be asked of the kernel again, a sample reads only
// whether the GIL is still free. No thread runs Python, starts or ends without taking it.
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "sampler/process/memory.hpp"
#include "sampler/python/objects.hpp"
#include "sampler/python/sleepers.hpp"

namespace dapprof::sampler::python {

class Quiet {
 public:
  struct Thread {
    pid_t tid = 0;
    Address tstate = 0;
    Address gil_holder = 0;  // of its interpreter; 0 if the GIL is not held
  };

  // A full read starts: until seen() has its threads, the process is not known to be quiet.
  void begin_read() {
    valid_ = false;
    gil_words_.clear();
  }
  // A GIL's "held" word found by the read in progress: the runtime's current thread state
  // (3.8-3.11, 8 bytes) or an interpreter's GIL `locked` flag (3.12+, 4 bytes).
  void add_gil_word(Address at, std::size_t size) { gil_words_.push_back({at, nullptr, size}); }
  bool has_gil_words() const { return !gil_words_.empty(); }

  // After the full read: whether the process is quiet (`eligible`: idle threads are skipped and
  // no native stacks are wanted, which need every sample's registers), given its threads.
  void seen(bool eligible, const std::vector<Thread>& threads, const Sleepers& sleepers);

  // Whether the process is still quiet at `now`, starting the sleepers' sample at `now`: one
  // read of its GIL words.
  bool still(Sleepers::Clock::time_point now, Sleepers& sleepers,
             const process::ProcessMemory& memory);

 private:
  bool valid_ = false;
  std::vector<process::ProcessMemory::Chunk> gil_words_;
  std::vector<std::pair<pid_t, Address>> threads_;  // TID and thread state of each sleeper
  std::vector<std::uint64_t> words_;                // scratch of still()
};

}  // namespace dapprof::sampler::python
