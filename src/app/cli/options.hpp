#pragma once
// What `dapprof dump`, `record` and `top` were asked to do, as parsed from the command line.
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "model/sampling_settings.hpp"
#include "sampler/sampler.hpp"

namespace dapprof::app::cli {

struct DumpOptions {
  pid_t pid = 0;
  bool json = false;
  bool nonblocking = false;
  bool native = false;
  bool native_all = false;  // implies native
  bool locals = false;
  bool async_tasks = false;  // --async: the asyncio task tree rather than the threads' stacks
  bool gc = true;            // --no-gc: no (garbage collection) frame
  bool opcodes = false;      // each Python frame's bytecode instruction
};

struct RecordOptions {
  std::optional<pid_t> pid;
  std::vector<std::string> command;  // program and arguments, when dapprof starts it
  model::SamplingSettings sampling;  // --rate, --nonblocking, --idle, --gil, --native, ...
  double duration = 0;               // seconds; 0: until stopped
  std::string output;                // empty: a name made from the program and the time
  std::string format = "flamegraph";
  bool threads = false;
  bool hide_debugger = false;  // the file and summary without debugpy's and pydevd's frames
  bool native_all = false;     // implies native
  sampler::LineNumbers lines = sampler::LineNumbers::Current;  // --function, --nolineno
  bool opcodes = false;  // each frame's bytecode instruction, where the format has a place for it
  bool full_filenames = false;  // else short ones where the format is read by people
  bool hide_progress = false;
  std::optional<std::string> capture;  // where the started program's stdout and stderr go
  std::string capture_arg;             // as given on the command line
};

struct TopOptions {
  std::optional<pid_t> pid;
  std::vector<std::string> command;  // program and arguments, when dapprof starts it
  model::SamplingSettings sampling;
  bool native_all = false;  // implies native
  bool full_filenames = false;
};

// Each returns the process exit code; messages go to stderr.
int run_dump(const DumpOptions& options);
// dump --async, once attached (dump_async.cpp).
int run_dump_async(sampler::PythonProcess& proc, const DumpOptions& options);
int run_record(const RecordOptions& options);
int run_top(const TopOptions& options);

}  // namespace dapprof::app::cli

namespace dapprof::app::cli {

struct ConvertOptions {
  std::string input;
  std::string format = "stream";  // a record format, or the profilingData events
  std::string output;             // empty or "-": stdout
  bool frames = false;            // the stream as frame IDs per sample rather than stack IDs
  bool threads = false;
  bool hide_debugger = false;
};

int run_convert(const ConvertOptions& options);

}  // namespace dapprof::app::cli
