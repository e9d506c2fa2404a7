#pragma once
// Where CPython 3.8-3.13 keep their asyncio tasks, found from outside through sys.modules:
//   3.8-3.11  the WeakSet asyncio.tasks._all_tasks (the _asyncio module's, which asyncio.tasks
//             imports): every task not yet freed
//   3.12-3.13 the WeakSet _scheduled_tasks, and the set _eager_tasks (tasks in their eager first
//             step)
// and, in every version, the dict _current_tasks (event loop -> the task it runs now), and the
// _asyncio module's Task and Future types that tell tasks and futures from other objects.
#include <cstdint>
#include <utility>
#include <vector>

#include "common/result.hpp"
#include "sampler/python/objects.hpp"

namespace dapprof::sampler::python {

struct LegacyRegistry {
  std::vector<Address> tasks;  // what the sets hold, unchecked; the reader reads each
  std::vector<std::pair<Address, Address>> current;  // (loop, running task)
  Address task_type = 0;
  Address future_type = 0;
  std::uint64_t torn = 0;  // weak references that could not be read
  bool truncated = false;  // more than `max_tasks` entries
};

// The registry of the interpreter whose modules dict is `modules`. NotPython when asyncio (or its
// C accelerator _asyncio, whose objects are the ones read) is not imported there.
Result<LegacyRegistry> read_legacy_registry(const Objects& objects, Address modules,
                                            std::size_t max_tasks);

// The keys of the set at `set` (live entries only), at most `max` (then `truncated`).
Result<std::vector<Address>> set_keys(const Objects& objects, Address set, std::size_t max,
                                      bool& truncated);

}  // namespace dapprof::sampler::python
