#pragma once
// The C Task objects of a CPython 3.8-3.13 target, read through the layout tools/layouts mirrors
// of _asynciomodule.c's private TaskObj, and the done-callbacks of any C future (a task's or a
// plain future's): what awaits a task is found through them (asyncio_legacy_awaiters.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "sampler/python/asyncio_legacy_kinds.hpp"
#include "sampler/python/objects.hpp"

namespace dapprof::sampler::python {

struct LegacyTask {
  Address id = 0;
  std::string name;
  Address coro = 0;
  Address fut_waiter = 0;  // the future (or task) it awaits now; 0 if none
  Address loop = 0;
  Address callback0 = 0;  // its done-callbacks: the first one, then a list of (callback, context)
  Address callbacks = 0;
  // cancel() was asked and the task has not finished: 3.11+ Task.cancelling() above 0; 3.8-3.10
  // only while the request waits to be delivered (task_must_cancel), which they keep no longer.
  bool cancelling = false;
};

// The pending tasks among `candidates`, read in batches: objects that are no task (a registry
// entry reused since), and tasks that are done, are left out; those whose memory or name read as
// nonsense are counted in `torn`.
Result<std::vector<LegacyTask>> read_legacy_tasks(const Objects& objects, ObjectKinds& kinds,
                                                  const std::vector<Address>& candidates,
                                                  std::uint64_t& torn);

// The done-callbacks of the future whose callback0 and callbacks fields are given, in order; at
// most a few hundred (a longer list is a misread).
Result<std::vector<Address>> done_callbacks(const Objects& objects, Address callback0,
                                            Address callbacks);

}  // namespace dapprof::sampler::python
