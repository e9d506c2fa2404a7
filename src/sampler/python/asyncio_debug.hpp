#pragma once
// CPython 3.14+'s _asyncio module publishes where it keeps its tasks: a struct of offsets in an
// ELF section named .AsyncioDebug (of the _asyncio extension module where it is one, else of the
// interpreter's executable or libpython). Read once per dump: asyncio may be imported after
// attach.
#include <sys/types.h>

#include <cstdint>
#include <string>

#include "common/result.hpp"
#include "sampler/process/memory.hpp"

namespace dapprof::sampler::python {

// The section's thirteen words, in the order 3.14 and 3.15 lay them out. Offsets of the thread
// state fields are from the start of the thread state (_PyThreadStateImpl, larger than the
// PyThreadState of the debug offsets); those of the interpreter from PyInterpreterState.
struct AsyncioOffsets {
  std::uint64_t task_size = 0;
  std::uint64_t task_name = 0;
  std::uint64_t task_awaited_by = 0;
  std::uint64_t task_is_task = 0;
  std::uint64_t task_awaited_by_is_set = 0;
  std::uint64_t task_coro = 0;
  std::uint64_t task_node = 0;  // the task's llist_node in its thread's (or interpreter's) ring
  std::uint64_t interp_size = 0;
  std::uint64_t interp_tasks_head = 0;
  std::uint64_t tstate_size = 0;
  std::uint64_t tstate_running_loop = 0;
  std::uint64_t tstate_running_task = 0;
  std::uint64_t tstate_tasks_head = 0;
};

struct AsyncioTarget {
  AsyncioOffsets offsets;
  // The value of _PySet_Dummy: the key a set leaves in a slot whose entry was removed (0 if the
  // symbol was not found; such keys are then told apart by being no known task).
  process::Address set_dummy = 0;
};

// NotPython when no mapped file has the section (asyncio not imported yet, or not CPython 3.14+);
// UnsupportedVersion when its offsets are implausible.
Result<AsyncioTarget> find_asyncio(pid_t pid, const process::ProcessMemory& memory,
                                   const std::string& interpreter_binary);

}  // namespace dapprof::sampler::python
