#include "protocol/messages.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace dapprof::protocol {
namespace {

std::string type_name(const Json& value) {
  if (value.is_number_integer()) return "integer";
  if (value.is_number_float()) return "number";
  return value.type_name();
}

Error invalid(std::string_view command, std::string_view field, std::string_view what) {
  return Error{fmt::format("{} argument '{}' {}", command, field, what),
               ErrorCode::InvalidArgument};
}

// Reads arguments[field] into out if present (null counts as absent). Returns an error message.
std::optional<Error> read_bool(const Json& arguments, std::string_view command,
                               std::string_view field, bool& out) {
  const auto it = arguments.find(field);
  if (it == arguments.end() || it->is_null()) return std::nullopt;
  if (!it->is_boolean())
    return invalid(command, field, fmt::format("must be true or false, not {}", type_name(*it)));
  out = it->get<bool>();
  return std::nullopt;
}

// Integers only, but an integral float such as 100.0 (Python's json writes those) is accepted.
std::optional<Error> read_int(const Json& arguments, std::string_view command,
                              std::string_view field, std::int64_t min, std::int64_t max,
                              std::string_view unit, std::int64_t& out) {
  const auto it = arguments.find(field);
  if (it == arguments.end() || it->is_null()) return std::nullopt;
  const auto range = fmt::format("between {} and {}{}", min, max, unit);
  std::int64_t value = 0;
  if (it->is_number_unsigned()) {
    const auto u = it->get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(max))
      return invalid(command, field, fmt::format("must be {}, not {}", range, u));
    value = static_cast<std::int64_t>(u);
  } else if (it->is_number_integer()) {
    value = it->get<std::int64_t>();
  } else if (it->is_number_float()) {
    const double d = it->get<double>();
    if (!std::isfinite(d) || d != std::floor(d))
      return invalid(command, field, fmt::format("must be a whole number {}, not {}", range, d));
    if (d < static_cast<double>(min) || d > static_cast<double>(max))
      return invalid(command, field, fmt::format("must be {}, not {}", range, d));
    value = static_cast<std::int64_t>(d);
  } else {
    return invalid(command, field,
                   fmt::format("must be an integer {}, not {}", range, type_name(*it)));
  }
  if (value < min || value > max)
    return invalid(command, field, fmt::format("must be {}, not {}", range, value));
  out = value;
  return std::nullopt;
}

Result<const Json*> arguments_object(const Json& arguments, std::string_view command) {
  static const Json kEmpty = Json::object();
  if (arguments.is_null()) return &kEmpty;
  if (!arguments.is_object())
    return Error{
        fmt::format("{} arguments must be a JSON object, not {}", command, type_name(arguments)),
        ErrorCode::InvalidArgument};
  return &arguments;
}

}  // namespace

namespace {

// "format": one of the protocol's format names.
std::optional<Error> read_format(const Json& arguments, std::string_view command,
                                 model::ProfileFormat& value) {
  const auto it = arguments.find("format");
  if (it == arguments.end() || it->is_null()) return std::nullopt;
  std::string choices;
  for (const auto format : model::kProfileFormats)
    choices += fmt::format("{}'{}'", choices.empty() ? "" : ", ", to_string(format));
  if (it->is_string()) {
    for (const auto format : model::kProfileFormats) {
      if (to_string(format) == it->get<std::string>()) {
        value = format;
        return std::nullopt;
      }
    }
    return invalid(command, "format",
                   fmt::format("must be one of {}, not '{}'", choices, it->get<std::string>()));
  }
  return invalid(command, "format", fmt::format("must be one of {}, not {}", choices, type_name(*it)));
}

}  // namespace

Result<StartProfilingArguments> StartProfilingArguments::parse(const Json& arguments) {
  constexpr std::string_view cmd = kStartProfiling;
  auto object = arguments_object(arguments, cmd);
  if (!object) return object.error();
  const Json& a = **object;

  StartProfilingArguments out;
  std::int64_t rate = out.rate, interval = out.batch_interval_ms, pid = 0;
  std::optional<Error> error;
  if ((error = read_int(a, cmd, "rate", kMinRateHz, kMaxRateHz, " samples per second", rate)) ||
      (error = read_bool(a, cmd, "native", out.native)) ||
      (error = read_bool(a, cmd, "nonblocking", out.nonblocking)) ||
      (error = read_bool(a, cmd, "idle", out.idle)) ||
      (error = read_bool(a, cmd, "gil", out.gil)) ||
      (error = read_bool(a, cmd, "subprocesses", out.subprocesses)) ||
      (error = read_int(a, cmd, "batchIntervalMs", kMinBatchIntervalMs, kMaxBatchIntervalMs, " ms",
                        interval)) ||
      (error = read_int(a, cmd, "pid", 1, std::numeric_limits<pid_t>::max(), "", pid)))
    return *error;
  out.rate = static_cast<int>(rate);
  out.batch_interval_ms = static_cast<int>(interval);
  if (pid != 0) out.pid = static_cast<pid_t>(pid);
  // Unwinding native stacks reads registers of stopped threads, so it cannot run nonblocking.
  if (out.native && out.nonblocking)
    return Error{
        "startProfiling arguments 'native' and 'nonblocking' cannot both be true: native stacks "
        "can only be read while the threads are paused; set 'nonblocking' to false",
        ErrorCode::InvalidArgument};
  return out;
}

Json to_json(const StartProfilingArguments& a) {
  Json j = {{"rate", a.rate},
            {"native", a.native},
            {"nonblocking", a.nonblocking},
            {"idle", a.idle},
            {"gil", a.gil},
            {"subprocesses", a.subprocesses},
            {"batchIntervalMs", a.batch_interval_ms}};
  if (a.pid) j["pid"] = *a.pid;
  return j;
}

StartProfilingResponse StartProfilingResponse::from(const StartProfilingArguments& enabled,
                                                    pid_t pid, std::string python_version) {
  return {pid,
          std::move(python_version),
          enabled.rate,
          enabled.native,
          enabled.nonblocking,
          enabled.idle,
          enabled.gil,
          enabled.subprocesses,
          enabled.batch_interval_ms,
          {}};
}

Json to_json(const StartProfilingResponse& b) {
  Json j = {{"pid", b.pid},
            {"pythonVersion", b.python_version},
            {"rate", b.rate},
            {"native", b.native},
            {"nonblocking", b.nonblocking},
            {"idle", b.idle},
            {"gil", b.gil},
            {"subprocesses", b.subprocesses},
            {"batchIntervalMs", b.batch_interval_ms}};
  if (!b.warning.empty()) j["warning"] = b.warning;
  return j;
}

std::string_view to_string(model::ProfileFormat format) {
  using model::ProfileFormat;
  switch (format) {
    case ProfileFormat::Speedscope:
      return "speedscope";
    case ProfileFormat::Cpuprofile:
      return "cpuprofile";
    case ProfileFormat::Collapsed:
      return "collapsed";
    case ProfileFormat::Flamegraph:
      return "flamegraph";
    case ProfileFormat::ChromeTrace:
      return "chrometrace";
  }
  return "speedscope";
}

Result<StopProfilingArguments> StopProfilingArguments::parse(const Json& arguments) {
  constexpr std::string_view cmd = kStopProfiling;
  auto object = arguments_object(arguments, cmd);
  if (!object) return object.error();
  const Json& a = **object;

  StopProfilingArguments out;
  if (const auto it = a.find("outputPath"); it != a.end() && !it->is_null()) {
    if (!it->is_string())
      return invalid(cmd, "outputPath", fmt::format("must be a string, not {}", type_name(*it)));
    auto path = it->get<std::string>();
    // The daemon's working directory means nothing to the client, so relative paths are refused.
    if (path.empty() || path.front() != '/')
      return invalid(cmd, "outputPath", fmt::format("must be an absolute path, not '{}'", path));
    out.output_path = std::move(path);
  }
  if (auto format = read_format(a, cmd, out.format)) return *format;
  if (auto error = read_bool(a, cmd, "hideDebugger", out.hide_debugger)) return *error;
  if (a.contains("format") && !a["format"].is_null()) {
    if (!out.output_path)
      return invalid(cmd, "format", "needs 'outputPath' too: it says how to write that file");
  }
  return out;
}

Json to_json(const StopProfilingArguments& a) {
  Json j = Json::object();
  if (a.output_path) {
    j["outputPath"] = *a.output_path;
    j["format"] = to_string(a.format);
  }
  if (a.hide_debugger) j["hideDebugger"] = true;
  return j;
}

Result<ExportProfileArguments> ExportProfileArguments::parse(const Json& arguments) {
  constexpr std::string_view cmd = kExportProfile;
  auto object = arguments_object(arguments, cmd);
  if (!object) return object.error();
  const Json& a = **object;
  ExportProfileArguments out;
  if (auto format = read_format(a, cmd, out.format)) return *format;
  if (auto error = read_bool(a, cmd, "hideDebugger", out.hide_debugger)) return *error;
  return out;
}

Json to_json(const ExportProfileArguments& a) {
  return {{"format", to_string(a.format)}, {"hideDebugger", a.hide_debugger}};
}

Json to_json(const ExportProfileResponse& b) {
  return {{"format", to_string(b.format)},
          {"fileExtension", model::file_extension(b.format)},
          {"content", b.content},
          {"sampleCount", b.sample_count}};
}

Json to_json(const FunctionStats& f) {
  return {{"function", f.function}, {"file", f.file}, {"self", f.self}, {"total", f.total}};
}

Json to_json(const ProfilingSummary& b) {
  Json j = {{"sampleCount", b.sample_count},
            {"duration", b.duration_ms},
            {"errorCount", b.error_count},
            {"droppedSampleCount", b.dropped_sample_count}};
  if (b.output_path) j["outputPath"] = *b.output_path;
  if (!b.top_functions.empty()) {
    Json top = Json::array();
    for (const auto& f : b.top_functions) top.push_back(to_json(f));
    j["topFunctions"] = std::move(top);
  }
  return j;
}

std::string_view to_string(StoppedReason reason) {
  switch (reason) {
    case StoppedReason::Requested:
      return "requested";
    case StoppedReason::Exited:
      return "exited";
    case StoppedReason::Error:
      return "error";
    case StoppedReason::Disconnected:
      return "disconnected";
  }
  return "error";
}

Json to_json(const ProfilingStopped& b) {
  Json j = {{"reason", to_string(b.reason)}};
  if (!b.message.empty()) j["message"] = b.message;
  Json summary = to_json(b.summary);  // named: items() of a temporary would dangle
  for (auto& [key, value] : summary.items()) j[key] = std::move(value);
  return j;
}

}  // namespace dapprof::protocol
