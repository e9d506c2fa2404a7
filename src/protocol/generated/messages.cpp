// Generated from schemas/*.schema.json by tools/protocol/generate.py. Do not edit: change the
// schemas (or the generator) and run `python3 tools/protocol/generate.py --output`; the test
// protocol_generated fails when this file is stale.
// clang-format off: the layout is the generator's, and reformatting would make it stale.
#include "protocol/generated/messages.hpp"

#include "protocol/fields.hpp"

namespace dapprof::protocol {

std::string_view to_string(ProfilingErrorId id) {
  switch (id) {
    case ProfilingErrorId::Internal:
      return "Internal";
    case ProfilingErrorId::InvalidArguments:
      return "InvalidArguments";
    case ProfilingErrorId::NoDebuggee:
      return "NoDebuggee";
    case ProfilingErrorId::AlreadyProfiling:
      return "AlreadyProfiling";
    case ProfilingErrorId::NotProfiling:
      return "NotProfiling";
    case ProfilingErrorId::NotPython:
      return "NotPython";
    case ProfilingErrorId::UnsupportedVersion:
      return "UnsupportedVersion";
    case ProfilingErrorId::PermissionDenied:
      return "PermissionDenied";
    case ProfilingErrorId::NoSuchProcess:
      return "NoSuchProcess";
    case ProfilingErrorId::ProcessExited:
      return "ProcessExited";
    case ProfilingErrorId::OutputFailed:
      return "OutputFailed";
    case ProfilingErrorId::NoProfile:
      return "NoProfile";
    case ProfilingErrorId::NoAsyncio:
      return "NoAsyncio";
  }
  return {};  // not an enumerator
}

std::string_view to_string(model::ProfileFormat format) {
  switch (format) {
    case model::ProfileFormat::Speedscope:
      return "speedscope";
    case model::ProfileFormat::Cpuprofile:
      return "cpuprofile";
    case model::ProfileFormat::Collapsed:
      return "collapsed";
    case model::ProfileFormat::Flamegraph:
      return "flamegraph";
    case model::ProfileFormat::ChromeTrace:
      return "chrometrace";
    case model::ProfileFormat::Pprof:
      return "pprof";
    case model::ProfileFormat::Gecko:
      return "gecko";
  }
  return {};  // not an enumerator
}

std::optional<model::ProfileFormat> parse_profile_format(std::string_view name) {
  for (const auto& [known, value] : kProfileFormatNames)
    if (known == name) return value;
  return std::nullopt;
}

std::string_view to_string(StoppedReason value) {
  switch (value) {
    case StoppedReason::Requested:
      return "requested";
    case StoppedReason::Exited:
      return "exited";
    case StoppedReason::Error:
      return "error";
    case StoppedReason::Disconnected:
      return "disconnected";
  }
  return {};  // not an enumerator
}

std::optional<StoppedReason> parse_stopped_reason(std::string_view name) {
  for (const auto& [known, value] : kStoppedReasonNames)
    if (known == name) return value;
  return std::nullopt;
}

std::string_view to_string(AsyncMode value) {
  switch (value) {
    case AsyncMode::Off:
      return "off";
    case AsyncMode::Running:
      return "running";
    case AsyncMode::All:
      return "all";
  }
  return {};  // not an enumerator
}

std::optional<AsyncMode> parse_async_mode(std::string_view name) {
  for (const auto& [known, value] : kAsyncModeNames)
    if (known == name) return value;
  return std::nullopt;
}

std::string_view to_string(SamplingMode value) {
  switch (value) {
    case SamplingMode::Active:
      return "active";
    case SamplingMode::Wall:
      return "wall";
    case SamplingMode::Cpu:
      return "cpu";
    case SamplingMode::Gil:
      return "gil";
    case SamplingMode::Exception:
      return "exception";
  }
  return {};  // not an enumerator
}

std::optional<SamplingMode> parse_sampling_mode(std::string_view name) {
  for (const auto& [known, value] : kSamplingModeNames)
    if (known == name) return value;
  return std::nullopt;
}

std::string_view to_string(ContentEncoding value) {
  switch (value) {
    case ContentEncoding::Text:
      return "text";
    case ContentEncoding::Base64:
      return "base64";
  }
  return {};  // not an enumerator
}

std::optional<ContentEncoding> parse_content_encoding(std::string_view name) {
  for (const auto& [known, value] : kContentEncodingNames)
    if (known == name) return value;
  return std::nullopt;
}

namespace {

fields::Check read(const fields::Reader& r, FunctionStats& out) {
  if (auto error = r.required("function")) return error;
  if (auto error = r.string("function", "", "", out.function)) return error;
  if (auto error = r.required("file")) return error;
  if (auto error = r.string("file", "", "", out.file)) return error;
  if (auto error = r.required("self")) return error;
  if (auto error = r.number("self", 0.0, fields::kUnbounded, out.self)) return error;
  if (auto error = r.required("total")) return error;
  if (auto error = r.number("total", 0.0, fields::kUnbounded, out.total)) return error;
  return std::nullopt;
}

fields::Check read(const fields::Reader& r, StartProfilingArguments& out) {
  if (auto error = r.integer("rate", kMinRateHz, kMaxRateHz, " samples per second", out.rate))
    return error;
  if (auto error = r.boolean("native", out.native)) return error;
  if (auto error = r.boolean("nonblocking", out.nonblocking)) return error;
  if (auto error = r.choice<SamplingMode>("mode", kSamplingModeNames, out.mode)) return error;
  if (auto error = r.boolean("idle", out.idle)) return error;
  if (auto error = r.boolean("gil", out.gil)) return error;
  if (auto error = r.boolean("gc", out.gc)) return error;
  if (auto error = r.boolean("opcodes", out.opcodes)) return error;
  if (auto error = r.boolean("subprocesses", out.subprocesses)) return error;
  if (auto error = r.choice<AsyncMode>("async", kAsyncModeNames, out.async)) return error;
  if (auto error = r.integer("batchIntervalMs", kMinBatchIntervalMs, kMaxBatchIntervalMs, " ms",
                             out.batch_interval_ms))
    return error;
  if (auto error = r.boolean("stacks", out.stacks)) return error;
  if (auto error = r.integer("pid", kMinPid, kMaxPid, "", out.pid)) return error;
  if (auto error = r.integer("processId", kMinProcessId, kMaxProcessId, "", out.process_id))
    return error;
  if (auto error = r.not_both("native", out.native, "nonblocking", out.nonblocking,
                              "native stacks can only be read while the threads are paused; set "
                              "'nonblocking' to false"))
    return error;
  return std::nullopt;
}

fields::Check read(const fields::Reader& r, StartProfilingResponse& out) {
  if (auto error = r.required("pid")) return error;
  if (auto error = r.integer("pid", 1, 2147483647, "", out.pid)) return error;
  if (auto error = r.required("pythonVersion")) return error;
  if (auto error = r.string("pythonVersion", "^3\\.[0-9]+\\.[0-9]+",
                            "a Python version such as 3.12.1", out.python_version))
    return error;
  if (auto error = r.required("rate")) return error;
  if (auto error = r.integer("rate", 1, 10000, " samples per second", out.rate)) return error;
  if (auto error = r.required("native")) return error;
  if (auto error = r.boolean("native", out.native)) return error;
  if (auto error = r.required("nonblocking")) return error;
  if (auto error = r.boolean("nonblocking", out.nonblocking)) return error;
  if (auto error = r.required("mode")) return error;
  if (auto error = r.choice<SamplingMode>("mode", kSamplingModeNames, out.mode)) return error;
  if (auto error = r.required("idle")) return error;
  if (auto error = r.boolean("idle", out.idle)) return error;
  if (auto error = r.required("gil")) return error;
  if (auto error = r.boolean("gil", out.gil)) return error;
  if (auto error = r.required("subprocesses")) return error;
  if (auto error = r.boolean("subprocesses", out.subprocesses)) return error;
  if (auto error = r.required("async")) return error;
  if (auto error = r.choice<AsyncMode>("async", kAsyncModeNames, out.async)) return error;
  if (auto error = r.required("batchIntervalMs")) return error;
  if (auto error = r.integer("batchIntervalMs", 10, 5000, " ms", out.batch_interval_ms))
    return error;
  if (auto error = r.required("stacks")) return error;
  if (auto error = r.boolean("stacks", out.stacks)) return error;
  if (auto error = r.string("warning", "", "", out.warning)) return error;
  return std::nullopt;
}

fields::Check read(const fields::Reader& r, StopProfilingArguments& out) {
  if (auto error = r.string("outputPath", "^/", "an absolute path", out.output_path)) return error;
  if (auto error = r.choice<model::ProfileFormat>("format", kProfileFormatNames, out.format))
    return error;
  if (auto error = r.boolean("hideDebugger", out.hide_debugger)) return error;
  if (auto error = r.dependent("format", "outputPath", "it says how to write that file"))
    return error;
  return std::nullopt;
}

fields::Check read(const fields::Reader& r, ProfilingSummary& out) {
  if (auto error = r.required("sampleCount")) return error;
  if (auto error = r.integer("sampleCount", 0, fields::kNoMaximum, "", out.sample_count))
    return error;
  if (auto error = r.required("duration")) return error;
  if (auto error = r.number("duration", 0.0, fields::kUnbounded, out.duration_ms)) return error;
  if (auto error = r.required("errorCount")) return error;
  if (auto error = r.integer("errorCount", 0, fields::kNoMaximum, "", out.error_count))
    return error;
  if (auto error = r.required("droppedSampleCount")) return error;
  if (auto error = r.integer("droppedSampleCount", 0, fields::kNoMaximum, "",
                             out.dropped_sample_count))
    return error;
  if (auto error = r.string("outputPath", "", "", out.output_path)) return error;
  if (auto error = r.array("topFunctions", 20, out.top_functions)) return error;
  return std::nullopt;
}

fields::Check read(const fields::Reader& r, ProfilingStopped& out) {
  if (auto error = r.required("reason")) return error;
  if (auto error = r.choice<StoppedReason>("reason", kStoppedReasonNames, out.reason)) return error;
  if (auto error = r.string("message", "", "", out.message)) return error;
  if (auto error = read(r, out.summary)) return error;
  return std::nullopt;
}

fields::Check read(const fields::Reader& r, ExportProfileArguments& out) {
  if (auto error = r.choice<model::ProfileFormat>("format", kProfileFormatNames, out.format))
    return error;
  if (auto error = r.boolean("hideDebugger", out.hide_debugger)) return error;
  return std::nullopt;
}

fields::Check read(const fields::Reader& r, ExportProfileResponse& out) {
  if (auto error = r.required("format")) return error;
  if (auto error = r.choice<model::ProfileFormat>("format", kProfileFormatNames, out.format))
    return error;
  if (auto error = r.required("fileExtension")) return error;
  if (auto error = r.string("fileExtension", "^[a-z]+(\\.[a-z]+)*$",
                            "lowercase letters, dot-separated", out.file_extension))
    return error;
  if (auto error = r.required("content")) return error;
  if (auto error = r.string("content", "", "", out.content)) return error;
  if (auto error = r.required("contentEncoding")) return error;
  if (auto error = r.choice<ContentEncoding>("contentEncoding", kContentEncodingNames,
                                             out.content_encoding))
    return error;
  if (auto error = r.required("sampleCount")) return error;
  if (auto error = r.integer("sampleCount", 0, fields::kNoMaximum, "", out.sample_count))
    return error;
  return std::nullopt;
}

fields::Check read(const fields::Reader& r, AsyncTasksArguments& out) {
  if (auto error = r.integer("pid", kMinPid, kMaxPid, "", out.pid)) return error;
  return std::nullopt;
}

}  // namespace

Result<FunctionStats> FunctionStats::parse(const Json& json) {
  auto object = fields::object(json, "functionStats", false);
  if (!object) return object.error();
  const fields::Reader reader(**object, "functionStats field");
  FunctionStats out;
  if (auto error = read(reader, out)) return *error;
  return out;
}

Json to_json(const FunctionStats& value) {
  Json j = Json::object();
  j["function"] = value.function;
  j["file"] = value.file;
  j["self"] = value.self;
  j["total"] = value.total;
  return j;
}

Result<StartProfilingArguments> StartProfilingArguments::parse(const Json& json) {
  auto object = fields::object(json, "startProfiling arguments", true);
  if (!object) return object.error();
  const fields::Reader reader(**object, "startProfiling argument");
  StartProfilingArguments out;
  if (auto error = read(reader, out)) return *error;
  return out;
}

Json to_json(const StartProfilingArguments& value) {
  Json j = Json::object();
  j["rate"] = value.rate;
  j["native"] = value.native;
  j["nonblocking"] = value.nonblocking;
  j["mode"] = to_string(value.mode);
  j["idle"] = value.idle;
  j["gil"] = value.gil;
  j["gc"] = value.gc;
  j["opcodes"] = value.opcodes;
  j["subprocesses"] = value.subprocesses;
  j["async"] = to_string(value.async);
  j["batchIntervalMs"] = value.batch_interval_ms;
  j["stacks"] = value.stacks;
  if (value.pid) j["pid"] = *value.pid;
  if (value.process_id) j["processId"] = *value.process_id;
  return j;
}

Result<StartProfilingResponse> StartProfilingResponse::parse(const Json& json) {
  auto object = fields::object(json, "startProfiling response body", false);
  if (!object) return object.error();
  const fields::Reader reader(**object, "startProfiling response field");
  StartProfilingResponse out;
  if (auto error = read(reader, out)) return *error;
  return out;
}

Json to_json(const StartProfilingResponse& value) {
  Json j = Json::object();
  j["pid"] = value.pid;
  j["pythonVersion"] = value.python_version;
  j["rate"] = value.rate;
  j["native"] = value.native;
  j["nonblocking"] = value.nonblocking;
  j["mode"] = to_string(value.mode);
  j["idle"] = value.idle;
  j["gil"] = value.gil;
  j["subprocesses"] = value.subprocesses;
  j["async"] = to_string(value.async);
  j["batchIntervalMs"] = value.batch_interval_ms;
  j["stacks"] = value.stacks;
  if (!value.warning.empty()) j["warning"] = value.warning;
  return j;
}

Result<StopProfilingArguments> StopProfilingArguments::parse(const Json& json) {
  auto object = fields::object(json, "stopProfiling arguments", true);
  if (!object) return object.error();
  const fields::Reader reader(**object, "stopProfiling argument");
  StopProfilingArguments out;
  if (auto error = read(reader, out)) return *error;
  return out;
}

Json to_json(const StopProfilingArguments& value) {
  Json j = Json::object();
  if (value.output_path) j["outputPath"] = *value.output_path;
  if (value.output_path) j["format"] = to_string(value.format);
  j["hideDebugger"] = value.hide_debugger;
  return j;
}

Result<ProfilingSummary> ProfilingSummary::parse(const Json& json) {
  auto object = fields::object(json, "stopProfiling response body", false);
  if (!object) return object.error();
  const fields::Reader reader(**object, "stopProfiling response field");
  ProfilingSummary out;
  if (auto error = read(reader, out)) return *error;
  return out;
}

Json to_json(const ProfilingSummary& value) {
  Json j = Json::object();
  j["sampleCount"] = value.sample_count;
  j["duration"] = value.duration_ms;
  j["errorCount"] = value.error_count;
  j["droppedSampleCount"] = value.dropped_sample_count;
  if (value.output_path) j["outputPath"] = *value.output_path;
  if (!value.top_functions.empty()) {
    Json items = Json::array();
    for (const auto& item : value.top_functions)
      items.push_back(to_json(item));
    j["topFunctions"] = std::move(items);
  }
  return j;
}

Result<ProfilingStopped> ProfilingStopped::parse(const Json& json) {
  auto object = fields::object(json, "profilingStopped event body", false);
  if (!object) return object.error();
  const fields::Reader reader(**object, "profilingStopped field");
  ProfilingStopped out;
  if (auto error = read(reader, out)) return *error;
  return out;
}

Json to_json(const ProfilingStopped& value) {
  Json j = Json::object();
  j["reason"] = to_string(value.reason);
  if (!value.message.empty()) j["message"] = value.message;
  // Named: items() of a temporary would dangle.
  Json summary = to_json(value.summary);
  for (auto& [key, item] : summary.items()) j[key] = std::move(item);
  return j;
}

Result<ExportProfileArguments> ExportProfileArguments::parse(const Json& json) {
  auto object = fields::object(json, "exportProfile arguments", true);
  if (!object) return object.error();
  const fields::Reader reader(**object, "exportProfile argument");
  ExportProfileArguments out;
  if (auto error = read(reader, out)) return *error;
  return out;
}

Json to_json(const ExportProfileArguments& value) {
  Json j = Json::object();
  j["format"] = to_string(value.format);
  j["hideDebugger"] = value.hide_debugger;
  return j;
}

Result<ExportProfileResponse> ExportProfileResponse::parse(const Json& json) {
  auto object = fields::object(json, "exportProfile response body", false);
  if (!object) return object.error();
  const fields::Reader reader(**object, "exportProfile response field");
  ExportProfileResponse out;
  if (auto error = read(reader, out)) return *error;
  return out;
}

Json to_json(const ExportProfileResponse& value) {
  Json j = Json::object();
  j["format"] = to_string(value.format);
  j["fileExtension"] = value.file_extension;
  j["content"] = value.content;
  j["contentEncoding"] = to_string(value.content_encoding);
  j["sampleCount"] = value.sample_count;
  return j;
}

Result<AsyncTasksArguments> AsyncTasksArguments::parse(const Json& json) {
  auto object = fields::object(json, "asyncTasks arguments", true);
  if (!object) return object.error();
  const fields::Reader reader(**object, "asyncTasks argument");
  AsyncTasksArguments out;
  if (auto error = read(reader, out)) return *error;
  return out;
}

Json to_json(const AsyncTasksArguments& value) {
  Json j = Json::object();
  if (value.pid) j["pid"] = *value.pid;
  return j;
}

}  // namespace dapprof::protocol
