// Writes, one JSON object per line, real messages produced by the protocol library, each tagged
// with the schema (schemas/<name>.schema.json) it must satisfy: {"schema": name, "message": ...}.
// test_schemas.py validates them, so the schemas and the C++ encoder cannot drift apart.
#include <cstdio>
#include <string>
#include <vector>

#include "common/base64.hpp"
#include "formats/async_tasks_json.hpp"
#include "formats/writers.hpp"
#include "protocol/batch.hpp"
#include "protocol/envelope.hpp"
#include "protocol/framing.hpp"
#include "protocol/messages.hpp"
#include "random_stacks.hpp"

namespace dapprof::protocol {
namespace {

int seq = 0;

void emit(std::string_view schema, Json message) {
  message["seq"] = ++seq;
  const Json line = {{"schema", schema}, {"message", std::move(message)}};
  std::puts(dump_json(line).c_str());
}

std::vector<FunctionStats> top_functions() {
  return {{"work", "/app/main.py", 7, 9}, {"décodé", "/usr/lib/libc.so.6", 2, 2.5}};
}

Json request(std::string_view command, Json arguments) {
  Json r = {{"seq", ++seq}, {"type", "request"}, {"command", command}};
  if (!arguments.is_null()) r["arguments"] = std::move(arguments);
  return r;
}

void emit_start_stop() {
  StartProfilingArguments defaults;
  const Json start = request(kStartProfiling, to_json(defaults));
  emit("startProfilingArguments", start);
  emit("startProfilingResponse",
       make_response(start, to_json(StartProfilingResponse::from(defaults, 4242, "3.12.1"))));

  auto custom = StartProfilingArguments::parse(Json::parse(
      R"({"rate": 10000, "native": true, "idle": true, "gil": true, "subprocesses": true,
          "batchIntervalMs": 5000, "pid": 4243})"));
  if (!custom) throw std::runtime_error(custom.message());
  const Json custom_request = request(kStartProfiling, to_json(*custom));
  emit("startProfilingArguments", custom_request);
  emit("startProfilingResponse", make_response(custom_request, to_json(StartProfilingResponse::from(
                                                                   *custom, 4243, "3.8.18"))));

  for (const Json& arguments :
       {Json(), Json{{"outputPath", "/tmp/profile.speedscope.json"}, {"hideDebugger", true}},
        Json{{"outputPath", "/tmp/café/profile.cpuprofile"}, {"format", "cpuprofile"}},
        Json{{"outputPath", "/tmp/p.txt"}, {"format", "collapsed"}},
        Json{{"outputPath", "/tmp/p.svg"}, {"format", "flamegraph"}},
        Json{{"outputPath", "/tmp/p.trace.json"},
             {"format", "chrometrace"},
             {"hideDebugger", true}}}) {
    auto parsed = StopProfilingArguments::parse(arguments);
    if (!parsed) throw std::runtime_error(parsed.message());
    const Json stop = request(kStopProfiling, to_json(*parsed));
    emit("stopProfilingArguments", stop);
    ProfilingSummary summary{1234, 12345.5, 3, 17, parsed->output_path, {}};
    emit("stopProfilingResponse", make_response(stop, to_json(summary)));
  }
  ProfilingSummary with_top{10, 100.0, 0, 0, std::nullopt, top_functions()};
  emit("stopProfilingResponse",
       make_response(request(kStopProfiling, Json::object()), to_json(with_top)));
}

// Real documents of the formats, as the daemon writes them.
void emit_export() {
  testing::RandomStacks random(7);
  formats::Profile profile;
  model::Snapshot snapshot;
  snapshot.time = std::chrono::steady_clock::now();
  for (int i = 0; i < 50; ++i) snapshot.threads.push_back(random.next(30));
  profile.add_snapshot(snapshot, snapshot.time);
  for (const Json& arguments :
       {Json(), Json{{"format", "flamegraph"}, {"hideDebugger", true}},
        Json{{"format", "collapsed"}}, Json{{"format", "cpuprofile"}, {"hideDebugger", false}},
        Json{{"format", "chrometrace"}, {"hideDebugger", true}}, Json{{"format", "gecko"}},
        Json{{"format", "pprof"}, {"hideDebugger", true}}}) {
    auto parsed = ExportProfileArguments::parse(arguments);
    if (!parsed) throw std::runtime_error(parsed.message());
    const Json export_request = request(kExportProfile, to_json(*parsed));
    emit("exportProfileArguments", export_request);
    ExportProfileResponse response;
    response.format = parsed->format;
    response.file_extension = std::string(model::file_extension(parsed->format));
    response.sample_count = profile.samples().size();
    response.content =
        formats::to_string(parsed->format, profile, {.hide_debugger = parsed->hide_debugger});
    if (model::is_binary(parsed->format)) {  // as the daemon sends it (Run::export_profile)
      response.content = base64(response.content);
      response.content_encoding = ContentEncoding::Base64;
    }
    emit("exportProfileResponse", make_response(export_request, to_json(response)));
  }
  emit("profilingErrorResponse",
       make_error_response(request(kExportProfile, Json::object()), errors::no_profile()));
}

void emit_errors() {
  const Json start = request(kStartProfiling, Json::object());
  const Json stop = request(kStopProfiling, Json::object());
  emit("profilingErrorResponse", make_error_response(start, errors::no_debuggee()));
  emit("profilingErrorResponse", make_error_response(start, errors::already_profiling(42)));
  emit("profilingErrorResponse", make_error_response(stop, errors::not_profiling()));
  emit("profilingErrorResponse", make_error_response(start, errors::not_in_session(7, 42)));
  emit("profilingErrorResponse",
       make_error_response(
           start, from_error({"permission denied to read the memory of process 42 (dapprof runs "
                              "as uid 1000). The process belongs to another user (uid 0).",
                              ErrorCode::PermissionDenied})));
  emit("profilingErrorResponse",
       make_error_response(stop, errors::output_failed("/root/x.json", "Permission denied")));
  for (auto code : {ErrorCode::Generic, ErrorCode::InvalidArgument, ErrorCode::NoSuchProcess,
                    ErrorCode::ProcessExited, ErrorCode::PermissionDenied, ErrorCode::NotPython,
                    ErrorCode::UnsupportedVersion, ErrorCode::TornRead})
    emit("profilingErrorResponse",
         make_error_response(start, from_error({"sampler said no (ünïcödé)", code})));
  auto bad = StartProfilingArguments::parse(Json{{"rate", 0}});
  emit("profilingErrorResponse", make_error_response(start, from_error(bad.error())));
}

// The task document as the daemon answers asyncTasks: the renderer `dump --async --json` uses.
void emit_async_tasks() {
  const Json defaults = request(kAsyncTasks, to_json(AsyncTasksArguments{}));
  emit("asyncTasksArguments", defaults);
  emit("asyncTasksArguments", request(kAsyncTasks, to_json(AsyncTasksArguments{.pid = 4243})));
  emit("asyncTasksArguments", request(kAsyncTasks, nullptr));
  sampler::AsyncTasks tasks;
  model::Frame handler, fetch;
  handler.function = "handler";
  handler.file = "/app/main.py";
  handler.line = 12;
  fetch.function = "fetch";
  fetch.file = "/app/données.py";
  fetch.line = 3;
  tasks.tasks.push_back(
      {0x7f0000001000, "Task-1", sampler::TaskState::Running, 4242, {}, {handler}});
  tasks.tasks.push_back({0x7f0000002000,
                         "fetch-ü",
                         sampler::TaskState::Waiting,
                         4242,
                         {0x7f0000001000},
                         {fetch, handler}});
  tasks.tasks.push_back({0x7f0000003000,
                         "victim",
                         sampler::TaskState::Cancelling,
                         4242,
                         {0x7f0000001000, 0x7f0000002000},
                         {}});
  tasks.tasks.push_back({0x7f0000004000, "", sampler::TaskState::Unknown, 0, {}, {}});
  tasks.torn = 2;
  tasks.truncated = true;
  tasks.missing = {"this version does not say which task is running"};
  emit("asyncTasksResponse",
       make_response(defaults, formats::async_tasks_to_json(tasks, "3.14.0")));
  emit("asyncTasksResponse",
       make_response(defaults, formats::async_tasks_to_json(sampler::AsyncTasks{}, "3.15.0a1")));
  emit("profilingErrorResponse",
       make_error_response(defaults, errors::no_debuggee("read the asyncio tasks")));
  emit("profilingErrorResponse",
       make_error_response(defaults, errors::not_in_session(7, 42, "read")));
  emit("profilingErrorResponse",
       make_error_response(defaults, ProtocolError{ProfilingErrorId::NoAsyncio,
                                                   "process 42 has not imported asyncio"}));
}

void emit_data(Encoding encoding) {
  testing::RandomStacks random(2024);
  BatchBuilder builder(encoding);
  std::optional<ProfilingBatch> backlog;
  for (int b = 0; b < 12; ++b) {
    for (int i = 0; i < b * 3; ++i) {
      auto thread = random.next();
      // As with opcodes: Python frames at instructions, some specialised, some without columns.
      if (b % 2 == 0)
        for (auto& frame : thread.frames) {
          if (!frame.python()) continue;
          model::Instruction in;
          in.offset = 2 * (i % 5);
          in.opcode = static_cast<std::uint8_t>(i % 3);
          in.base_opcode = 0;
          in.name = i % 3 == 0 ? "BINARY_OP" : "BINARY_OP_ADD_INT";
          in.base_name = "BINARY_OP";
          in.line = in.end_line = frame.line;
          if (i % 4 != 0) in.column = 4, in.end_column = 4 + i % 7 + 1;
          frame.instruction = in;
        }
      // With stacks, some stacks sampled again in a row: runs with counts above 1.
      for (int n = encoding == Encoding::Stacks && i % 3 == 0 ? 3 : 1; n > 0; --n)
        if (auto status = builder.add(thread); !status) throw std::runtime_error(status.message());
    }
    builder.add_errors(static_cast<std::uint64_t>(b % 2));
    // A child process of a run with subprocesses: announced, then its end.
    if (b == 0) builder.add_process({.pid = 4243, .command_line = "/usr/bin/python3 worker.py"});
    if (b == 4) builder.process_exited(4243);
    ProfilingBatch batch = builder.take(100.25);
    if (b % 4 == 1) drop_samples(batch);
    if (b % 3 == 2) {  // merged with the next one
      backlog = std::move(batch);
      continue;
    }
    if (backlog) batch = merge(std::move(*backlog), std::move(batch));
    backlog.reset();
    emit("profilingData", make_event(kProfilingData, to_json(batch)));
  }
}

void emit_stopped() {
  for (auto reason : {StoppedReason::Requested, StoppedReason::Exited, StoppedReason::Error,
                      StoppedReason::Disconnected}) {
    ProfilingStopped stopped{reason,
                             std::string("ended: ") + std::string(to_string(reason)),
                             {100, 1000.0, 0, 0, std::nullopt, {}}};
    emit("profilingStopped", make_event(kProfilingStopped, to_json(stopped)));
    stopped.message.clear();
    stopped.summary.output_path = "/tmp/out.speedscope.json";
    stopped.summary.top_functions = top_functions();
    emit("profilingStopped", make_event(kProfilingStopped, to_json(stopped)));
  }
}

}  // namespace
}  // namespace dapprof::protocol

int main() {
  try {
    dapprof::protocol::emit_start_stop();
    dapprof::protocol::emit_export();
    dapprof::protocol::emit_errors();
    dapprof::protocol::emit_async_tasks();
    dapprof::protocol::emit_data(dapprof::protocol::Encoding::Frames);
    dapprof::protocol::emit_data(dapprof::protocol::Encoding::Stacks);
    dapprof::protocol::emit_stopped();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "protocol_emit_messages: %s\n", e.what());
    return 1;
  }
  return 0;
}
