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

// Where an interpreter's registry is: objects made once when asyncio is imported, found through
// sys.modules by name (a read of every key's string: costly, so found once and kept a while).
struct LegacyRegistryPlaces {
  Address task_type = 0;
  Address future_type = 0;
  Address weak_data = 0;  // the set of weak references of _all_tasks or _scheduled_tasks
  Address eager = 0;      // 3.12-3.13: the set _eager_tasks; 0 before
  Address current = 0;    // the dict _current_tasks; 0 if it has none
};

// The places of the interpreter whose modules dict is `modules`. NotPython when asyncio (or its
// C accelerator _asyncio, whose objects are the ones read) is not imported there.
Result<LegacyRegistryPlaces> find_legacy_registry(const Objects& objects, Address modules);

// What the registry at `places` holds now.
Result<LegacyRegistry> read_legacy_registry(const Objects& objects,
                                            const LegacyRegistryPlaces& places,
                                            std::size_t max_tasks);

// The keys of the set at `set` (live entries only), at most `max` (then `truncated`).
Result<std::vector<Address>> set_keys(const Objects& objects, Address set, std::size_t max,
                                      bool& truncated);

}  // namespace dapprof::sampler::python
