#pragma once
// What `dapprof dump` and `dapprof record` were asked to do, as parsed from the command line.
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace dapprof::sampler::cli {

struct DumpOptions {
  pid_t pid = 0;
  bool json = false;
  bool nonblocking = false;
  bool native = false;
  bool native_all = false;  // implies native
};

struct RecordOptions {
  std::optional<pid_t> pid;
  std::vector<std::string> command;  // program and arguments, when dapprof starts it
  double rate = 100;
  double duration = 0;  // seconds; 0: until stopped
  std::string output;   // empty: a name made from the program and the time
  std::string format = "flamegraph";
  bool nonblocking = false;
  bool idle = false;
  bool gil = false;
  bool threads = false;
  bool subprocesses = false;
  bool native = false;
  bool native_all = false;  // implies native
};

// Each returns the process exit code; messages go to stderr.
int run_dump(const DumpOptions& options);
int run_record(const RecordOptions& options);

}  // namespace dapprof::sampler::cli
