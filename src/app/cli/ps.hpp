#pragma once
// `dapprof ps`: the Python processes on this machine, for a client to offer as targets. Reads only
// /proc (the command line, the owner, the mapped file names): no process memory, no ptrace.
#include <sys/types.h>

#include <string>
#include <vector>

namespace dapprof::app::cli {

struct PythonProcessEntry {
  pid_t pid = 0;
  // In a PID namespace of its own (a container): the PID it has there, which the program itself,
  // its logs and debugpy report; 0 when it is in dapprof's namespace.
  pid_t ns_pid = 0;
  unsigned uid = 0;
  std::string user;                  // the owner's name, or its uid if it has none
  std::vector<std::string> command;  // its command line
  std::string version;               // "3.11" from the interpreter's file name; "" if not known
  bool own = false;                  // the same user as the caller
  // Whether this user can read its mappings; a process that cannot be read cannot be sampled.
  bool readable = false;
  // When it cannot be read: why, and what would let dapprof read it (for a client to show).
  std::string why;
};

// The caller's own processes first, then by pid. A process whose mappings cannot be read is
// listed when its command line names a python.
std::vector<PythonProcessEntry> list_python_processes();

struct PsOptions {
  bool json = false;
};

int run_ps(const PsOptions& options);

}  // namespace dapprof::app::cli
