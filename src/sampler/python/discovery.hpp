#pragma once
// Finding the CPython interpreter inside a process: the ELF file (python executable or libpython)
// that defines _PyRuntime, where it is loaded, and which version it is.
#include <sys/types.h>

#include <string>
#include <vector>

#include "common/result.hpp"
#include "sampler/process/maps.hpp"
#include "sampler/process/memory.hpp"
#include "sampler/python/objects.hpp"

namespace dapprof::sampler::python {

struct Interpreter {
  std::string binary;   // the ELF file holding _PyRuntime
  Address runtime = 0;  // address of _PyRuntime in the target
  int major = 0;
  int minor = 0;
  std::string version;  // "3.11.7" (or "3.9" if the micro version could not be read)
  TypeAddresses types;
};

// NoSuchProcess, NotPython (no libpython or python executable with _PyRuntime) or an error
// saying why the version could not be determined. Does not check that the version is supported.
Result<Interpreter> discover_interpreter(pid_t pid, const process::ProcessMemory& memory);

// "3.X" of the interpreter a process's mappings name (libpython3.X or python3.X), or "" if none
// does: a guess from file names alone, for listing processes without reading their memory.
std::string version_in_maps(const std::vector<process::MapEntry>& maps);

// Finds a version string "3.X.Y" followed by " (" (the start of sys.version) in a memory image;
// returns "" if none. Exposed for tests.
std::string find_version_string(std::string_view image, int major, int minor);

}  // namespace dapprof::sampler::python
