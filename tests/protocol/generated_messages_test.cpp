// The messages generated from schemas/ (protocol/generated/messages.hpp): the fields the schemas
// added, round trips through to_json and parse, and the names the generator derives.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "model/frame.hpp"
#include "protocol/envelope.hpp"
#include "protocol/messages.hpp"
#include "protocol/sampling.hpp"

namespace dapprof::protocol {
namespace {

template <typename T>
T round_trip(const T& value) {
  auto parsed = T::parse(to_json(value));
  EXPECT_TRUE(parsed.ok()) << parsed.message();
  return parsed.ok() ? *parsed : T{};
}

TEST(GeneratedMessages, NamesComeFromTheSchemas) {
  EXPECT_EQ(kExportProfile, "exportProfile");
  EXPECT_EQ(kSupportsProfiling, "supportsProfiling");
  EXPECT_EQ(static_cast<int>(ProfilingErrorId::NoSuchProcess), 2008);
  EXPECT_EQ(static_cast<int>(ProfilingErrorId::NoProfile), 2011);
  EXPECT_EQ(to_string(ProfilingErrorId::InvalidArguments), "InvalidArguments");
  EXPECT_EQ(kMinRateHz, 1);
  EXPECT_EQ(kMaxBatchIntervalMs, 5000);
  EXPECT_EQ(keys::frame::kOrigin, "origin");
  EXPECT_EQ(kFrameOriginDebugger, "debugger");
}

TEST(GeneratedMessages, EveryModelFormatHasAProtocolName) {
  for (auto format : model::kProfileFormats) {
    const auto name = to_string(format);
    ASSERT_FALSE(name.empty());
    EXPECT_EQ(parse_profile_format(name), format) << name;
  }
  EXPECT_EQ(to_string(model::ProfileFormat::ChromeTrace), "chrometrace");
  EXPECT_FALSE(parse_profile_format("perf").has_value());
  EXPECT_EQ(parse_stopped_reason("disconnected"), StoppedReason::Disconnected);
}

// The schema's task states are the model's names of them, in its order.
TEST(GeneratedMessages, TaskStatesAreTheModels) {
  const std::vector<std::string_view> schema{kFrameTaskRunning, kFrameTaskWaiting,
                                             kFrameTaskCancelling, kFrameTaskUnknown};
  const std::vector<std::string_view> model{model::task_state_name(model::TaskState::Running),
                                            model::task_state_name(model::TaskState::Waiting),
                                            model::task_state_name(model::TaskState::Cancelling),
                                            model::task_state_name(model::TaskState::Unknown)};
  EXPECT_EQ(schema, model);
}

TEST(GeneratedMessages, StopProfilingTakesChrometraceAndHideDebugger) {
  auto parsed = StopProfilingArguments::parse(
      Json{{"outputPath", "/tmp/t.json"}, {"format", "chrometrace"}, {"hideDebugger", true}});
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  EXPECT_EQ(parsed->format, model::ProfileFormat::ChromeTrace);
  EXPECT_TRUE(parsed->hide_debugger);
  EXPECT_EQ(round_trip(*parsed), *parsed);
  auto bad = StopProfilingArguments::parse(Json{{"hideDebugger", "yes"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.message(),
            "stopProfiling argument 'hideDebugger' must be true or false, not string");
  // Without outputPath the format is not written: it would need one.
  EXPECT_EQ(to_json(StopProfilingArguments{}).dump(), R"({"hideDebugger":false})");
}

TEST(GeneratedMessages, ExportProfileArgumentsTakeTheirDefaults) {
  for (const Json& arguments : {Json(), Json::object(), Json{{"format", nullptr}}}) {
    auto parsed = ExportProfileArguments::parse(arguments);
    ASSERT_TRUE(parsed.ok()) << parsed.message();
    EXPECT_EQ(parsed->format, model::ProfileFormat::Speedscope);
    EXPECT_FALSE(parsed->hide_debugger);
  }
  auto flamegraph = ExportProfileArguments::parse(Json{{"format", "flamegraph"}});
  ASSERT_TRUE(flamegraph.ok());
  EXPECT_EQ(flamegraph->format, model::ProfileFormat::Flamegraph);
  auto bad = ExportProfileArguments::parse(Json{{"format", 3}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.code(), ErrorCode::InvalidArgument);
  EXPECT_NE(bad.message().find("exportProfile argument 'format' must be 'speedscope'"),
            std::string::npos)
      << bad.message();
}

TEST(GeneratedMessages, ExportProfileResponseRoundTrips) {
  const ExportProfileResponse body{model::ProfileFormat::Collapsed, "txt", "main;f 2\n",
                                   ContentEncoding::Text, 2};
  EXPECT_EQ(to_json(body).dump(),
            R"({"format":"collapsed","fileExtension":"txt","content":"main;f 2\n",)"
            R"("contentEncoding":"text","sampleCount":2})");
  EXPECT_EQ(round_trip(body), body);
  const ExportProfileResponse binary{model::ProfileFormat::Pprof, "pb.gz", "H4sI",
                                     ContentEncoding::Base64, 1};
  EXPECT_EQ(to_json(binary)["contentEncoding"], "base64");
  EXPECT_EQ(round_trip(binary), binary);
  auto missing = ExportProfileResponse::parse(Json{{"format", "collapsed"}});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.message(), "exportProfile response field 'fileExtension' is missing");
  auto dotted = ExportProfileResponse::parse(Json{{"format", "collapsed"},
                                                  {"fileExtension", ".txt"},
                                                  {"content", ""},
                                                  {"contentEncoding", "text"},
                                                  {"sampleCount", 0}});
  ASSERT_FALSE(dotted.ok());
  EXPECT_NE(
      dotted.message().find("'fileExtension' must be lowercase letters, dot-separated, not '.txt'"),
      std::string::npos)
      << dotted.message();
}

TEST(GeneratedMessages, SummariesCarryTopFunctions) {
  ProfilingSummary summary{5, 50.0,          0,
                           1, "/tmp/p.json", {{"f", "/a.py", 3, 5}, {"g", "/b.py", 2, 2}}};
  const Json json = to_json(summary);
  ASSERT_EQ(json["topFunctions"].size(), 2u);
  EXPECT_EQ(json["topFunctions"][0]["function"], "f");
  EXPECT_EQ(json["topFunctions"][0]["self"], 3.0);
  EXPECT_EQ(round_trip(summary), summary);
  // No list: the field is left out, as before the schemas had it.
  summary.top_functions.clear();
  EXPECT_FALSE(to_json(summary).contains("topFunctions"));

  ProfilingStopped stopped{StoppedReason::Error, "read failed", summary};
  stopped.summary.top_functions = {{"h", "libc.so.6", 1, 1}};
  EXPECT_EQ(round_trip(stopped), stopped);

  Json bad = to_json(stopped);
  bad["topFunctions"][0]["self"] = -1;
  auto parsed = ProfilingStopped::parse(bad);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.message(),
            "profilingStopped field 'topFunctions' item 0: functionStats field 'self' must be at "
            "least 0, not -1");
  bad["topFunctions"] = Json::array();
  for (int i = 0; i < 21; ++i)
    bad["topFunctions"].push_back(to_json(FunctionStats{"f", "a", 1, 1}));
  EXPECT_FALSE(ProfilingStopped::parse(bad).ok());
  auto reason = ProfilingStopped::parse(Json{{"reason", "crashed"}});
  ASSERT_FALSE(reason.ok());
  EXPECT_NE(reason.message().find("'reason' must be 'requested', 'exited', 'error' or "
                                  "'disconnected', not 'crashed'"),
            std::string::npos);
}

TEST(GeneratedMessages, StartResponseRoundTrips) {
  StartProfilingArguments enabled;
  enabled.native = true;
  auto body = StartProfilingResponse::from(enabled, 7, "3.13.1");
  body.warning = "untested";
  EXPECT_EQ(round_trip(body), body);
  EXPECT_EQ(round_trip(enabled), enabled);
  enabled.async = AsyncMode::All;
  EXPECT_EQ(StartProfilingResponse::from(enabled, 7, "3.14.2").async, AsyncMode::All);
  EXPECT_EQ(round_trip(enabled), enabled);
  EXPECT_EQ(sampling_settings(enabled)->async, model::AsyncMode::All);
  auto bad = StartProfilingArguments::parse(Json{{"async", "tasks"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("async"), std::string::npos) << bad.message();
  auto old = StartProfilingResponse::parse(Json{{"pid", 7}, {"pythonVersion", "2.7.18"}});
  ASSERT_FALSE(old.ok());
  EXPECT_NE(old.message().find("'pythonVersion' must be a Python version"), std::string::npos);
}

}  // namespace
}  // namespace dapprof::protocol
