// `dapprof dump`: every thread's Python stack, once, like `py-spy dump`.
#include <fmt/format.h>

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/cli/options.hpp"
#include "app/cli/proc_info.hpp"
#include "formats/instructions.hpp"
#include "formats/snapshot_json.hpp"
#include "sampler/sampler.hpp"

namespace dapprof::app::cli {
namespace {

using Json = nlohmann::ordered_json;
using sampler::PythonProcess;

std::string frame_text(const model::Frame& f) {
  if (f.native() && f.file.empty()) {
    const auto slash = f.module.rfind('/');
    const std::string module =
        slash == std::string::npos ? f.module.str() : f.module.substr(slash + 1);
    return module.empty() ? f.function.str() : fmt::format("{} ({})", f.function, module);
  }
  if (f.file.empty()) return f.function;
  if (f.line <= 0) return fmt::format("{} ({})", f.function, f.file);
  std::string text = fmt::format("{} ({}:{})", f.function, f.file, f.line);
  if (const auto& i = f.instruction) {
    // "[BINARY_OP_MULTIPLY_INT @62 (BINARY_OP), col 16-26]": columns 1-based, as editors count.
    text += fmt::format(" [{}", formats::instruction_label(*i));
    if (i->stands_for_another()) text += fmt::format(" ({})", i->base_name);
    if (i->has_columns()) text += fmt::format(", col {}-{}", i->column + 1, i->end_column);
    text += "]";
  }
  return text;
}

// As py-spy lays them out: the arguments, then the other locals, under the frame.
void print_locals(const std::vector<model::LocalVariable>& vars) {
  for (const bool arguments : {true, false}) {
    bool heading = false;
    for (const auto& v : vars) {
      if (v.argument != arguments) continue;
      if (!heading) fmt::print("        {}:\n", arguments ? "Arguments" : "Locals");
      heading = true;
      fmt::print("            {}: {}\n", v.name, v.value);
    }
  }
}

void print_text(const PythonProcess& proc, const model::Snapshot& snap) {
  const auto cmd = joined(command_line(proc.pid()));
  const auto exe = executable(proc.pid());
  fmt::print("Process {}: {}\n", proc.pid(), cmd.empty() ? "?" : cmd);
  fmt::print("Python v{}{}\n", proc.python_version(), exe.empty() ? "" : " (" + exe + ")");
  for (const auto& t : snap.threads) {
    fmt::print("\nThread 0x{:X} ({})", t.info.thread_id, t.status());
    if (!t.info.name.empty()) fmt::print(": \"{}\"", t.info.name);
    fmt::print("\n");
    std::size_t python_frames = 0;  // t.locals has an entry per Python frame
    for (const auto& f : t.frames) {
      fmt::print("    {}\n", frame_text(f));
      if (!f.python() || python_frames >= t.locals.size()) continue;
      print_locals(t.locals[python_frames++]);
    }
  }
}

void print_json(const PythonProcess& proc, const model::Snapshot& snap) {
  const Json doc = formats::snapshot_to_json(snap, proc.python_version());
  std::cout << doc.dump(2, ' ', false, Json::error_handler_t::replace) << '\n';
}

}  // namespace

int run_dump(const DumpOptions& options) {
  sampler::AttachOptions attach;
  attach.nonblocking = options.nonblocking;
  attach.gc = options.gc;
  attach.native = options.native || options.native_all;
  attach.native_all = options.native_all;
  attach.locals = options.locals;
  attach.opcodes = options.opcodes;
  if (attach.native && attach.nonblocking) {
    fmt::print(stderr,
               "dapprof: error: --native needs the program paused while its stacks are read: "
               "drop --nonblocking to include native frames\n");
    return 2;
  }
  if (options.async_tasks && (attach.native || attach.locals)) {
    fmt::print(stderr,
               "dapprof: error: --async prints the asyncio tasks, without native frames or local "
               "variables: drop --native/--native-all/--locals, or --async\n");
    return 2;
  }
  auto proc = PythonProcess::attach(options.pid, attach);
  if (!proc) {
    fmt::print(stderr, "dapprof: error: {}\n", proc.message());
    return 1;
  }
  if (!(*proc)->warning().empty()) fmt::print(stderr, "dapprof: warning: {}\n", (*proc)->warning());
  if (options.async_tasks) return run_dump_async(**proc, options);
  auto snap = (*proc)->snapshot();
  // A read of a running program can be torn; another try usually succeeds.
  for (int attempt = 0; attempt < 10 && !snap && snap.code() == ErrorCode::TornRead; ++attempt) {
    snap = (*proc)->snapshot();
  }
  if (!snap) {
    fmt::print(stderr, "dapprof: error: reading process {}: {}\n", options.pid, snap.message());
    return 1;
  }
  if (options.json) {
    print_json(**proc, *snap);
  } else {
    print_text(**proc, *snap);
  }
  std::cout.flush();
  std::fflush(stdout);
  return 0;
}

}  // namespace dapprof::app::cli
