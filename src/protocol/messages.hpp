#pragma once
// The profiling extension's requests, responses and events, declared once (cppdap style): parsed
// from the client's JSON with validation, serialised with to_json. Field meanings, defaults and
// ranges are documented in docs/PROFILING.md and checked by the schemas in schemas/.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "model/profile_format.hpp"
#include "protocol/json.hpp"

namespace dapprof::protocol {

inline constexpr std::string_view kSupportsProfiling = "supportsProfiling";
inline constexpr std::string_view kStartProfiling = "startProfiling";
inline constexpr std::string_view kStopProfiling = "stopProfiling";
inline constexpr std::string_view kExportProfile = "exportProfile";
inline constexpr std::string_view kProfilingData = "profilingData";
inline constexpr std::string_view kProfilingStopped = "profilingStopped";

inline constexpr int kDefaultRateHz = 100;
inline constexpr int kMinRateHz = 1;
inline constexpr int kMaxRateHz = 10000;
inline constexpr int kDefaultBatchIntervalMs = 100;
// Below 10 ms the per-event overhead dominates; above 5 s the view no longer feels live.
inline constexpr int kMinBatchIntervalMs = 10;
inline constexpr int kMaxBatchIntervalMs = 5000;

// startProfiling request arguments. Absent fields take their defaults; unknown fields are ignored.
struct StartProfilingArguments {
  int rate = kDefaultRateHz;  // samples per second
  bool native = false;
  bool nonblocking = false;  // false: threads are paused for each sample
  bool idle = false;
  bool gil = false;
  bool subprocesses = false;
  int batch_interval_ms = kDefaultBatchIntervalMs;
  std::optional<pid_t> pid;  // default: the session's debuggee

  // `arguments` is the request's "arguments" member (null or absent means all defaults). Each
  // invalid field gives an error naming it, with code InvalidArgument.
  static Result<StartProfilingArguments> parse(const Json& arguments);
};
Json to_json(const StartProfilingArguments& arguments);

// startProfiling response body: the process sampled and the settings in effect.
struct StartProfilingResponse {
  pid_t pid = 0;
  std::string python_version;  // e.g. "3.12.1"
  int rate = kDefaultRateHz;
  bool native = false;
  bool nonblocking = false;
  bool idle = false;
  bool gil = false;
  bool subprocesses = false;
  int batch_interval_ms = kDefaultBatchIntervalMs;
  // Something the user should know about this run, e.g. a Python version newer than the tested
  // ones; empty: none (the field is left out).
  std::string warning;

  static StartProfilingResponse from(const StartProfilingArguments& enabled, pid_t pid,
                                     std::string python_version);
};
Json to_json(const StartProfilingResponse& body);

// The format's name in stopProfiling's and exportProfile's "format".
std::string_view to_string(model::ProfileFormat format);

// stopProfiling request arguments: where to write the whole profile, if anywhere.
struct StopProfilingArguments {
  std::optional<std::string> output_path;  // absolute; absent: no file is written
  model::ProfileFormat format = model::ProfileFormat::Speedscope;
  bool hide_debugger = false;  // the file and top_functions without the debugger's frames

  static Result<StopProfilingArguments> parse(const Json& arguments);
};
Json to_json(const StopProfilingArguments& arguments);

// exportProfile request arguments: the session's current or last run in a format.
struct ExportProfileArguments {
  model::ProfileFormat format = model::ProfileFormat::Speedscope;
  bool hide_debugger = false;

  static Result<ExportProfileArguments> parse(const Json& arguments);
};
Json to_json(const ExportProfileArguments& arguments);

// exportProfile response body: the whole document.
struct ExportProfileResponse {
  model::ProfileFormat format = model::ProfileFormat::Speedscope;
  std::string content;
  std::uint64_t sample_count = 0;
};
Json to_json(const ExportProfileResponse& body);

// One row of a run's summary: a function's own and total samples.
struct FunctionStats {
  std::string function;
  std::string file;
  double self = 0;
  double total = 0;
};
Json to_json(const FunctionStats& row);
inline constexpr std::size_t kMaxTopFunctions = 20;

// Totals of a whole profiling run: the stopProfiling response body, and part of profilingStopped.
struct ProfilingSummary {
  std::uint64_t sample_count = 0;
  double duration_ms = 0;
  std::uint64_t error_count = 0;
  std::uint64_t dropped_sample_count = 0;
  std::optional<std::string> output_path;  // the file written, if any
  std::vector<FunctionStats> top_functions;  // by self then total samples, at most 20
};
Json to_json(const ProfilingSummary& body);

enum class StoppedReason { Requested, Exited, Error, Disconnected };
std::string_view to_string(StoppedReason reason);

// profilingStopped event body: sampling ended other than by a stopProfiling request.
struct ProfilingStopped {
  StoppedReason reason = StoppedReason::Exited;
  std::string message;  // for a person; omitted from the JSON when empty
  ProfilingSummary summary;
};
Json to_json(const ProfilingStopped& body);

}  // namespace dapprof::protocol
