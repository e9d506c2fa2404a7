// Request argument validation, message bodies and DAP envelopes.
#include "protocol/messages.hpp"

#include <gtest/gtest.h>

#include "common/base64.hpp"
#include "protocol/envelope.hpp"
#include "protocol/sampling.hpp"

namespace dapprof::protocol {
namespace {

TEST(StartProfilingArguments, AbsentOrNullArgumentsTakeTheDefaults) {
  for (const Json& arguments : {Json(), Json::object(), Json{{"rate", nullptr}}}) {
    auto parsed = StartProfilingArguments::parse(arguments);
    ASSERT_TRUE(parsed.ok()) << parsed.message();
    EXPECT_EQ(parsed->rate, 100);
    EXPECT_FALSE(parsed->native || parsed->nonblocking || parsed->idle || parsed->gil ||
                 parsed->subprocesses);
    EXPECT_EQ(parsed->batch_interval_ms, 100);
    EXPECT_FALSE(parsed->pid.has_value());
  }
}

TEST(StartProfilingArguments, ParsesEveryField) {
  auto parsed = StartProfilingArguments::parse(Json::parse(R"({"rate": 250.0, "native": true,
      "idle": true, "gil": true, "subprocesses": true, "batchIntervalMs": 10, "pid": 1234,
      "futureOption": "ignored"})"));
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  EXPECT_EQ(parsed->rate, 250);
  EXPECT_TRUE(parsed->native && parsed->idle && parsed->gil && parsed->subprocesses);
  EXPECT_FALSE(parsed->nonblocking);
  EXPECT_EQ(parsed->batch_interval_ms, 10);
  EXPECT_EQ(parsed->pid, 1234);
  auto again = StartProfilingArguments::parse(to_json(*parsed));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(to_json(*again), to_json(*parsed));
}

TEST(StartProfilingArguments, SamplingSettingsAreTheRequestedOnes) {
  auto parsed = StartProfilingArguments::parse(
      Json::parse(R"({"rate": 250, "idle": true, "subprocesses": true, "batchIntervalMs": 10})"));
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  ASSERT_TRUE(sampling_settings(*parsed).ok());
  EXPECT_EQ(*sampling_settings(*parsed),
            (model::SamplingSettings{
                .rate_hz = 250, .mode = model::SamplingMode::Wall, .subprocesses = true}));
  auto native = StartProfilingArguments::parse(Json::parse(R"({"native": true, "gil": true})"));
  ASSERT_TRUE(native.ok()) << native.message();
  EXPECT_EQ(*sampling_settings(*native),
            (model::SamplingSettings{.mode = model::SamplingMode::Gil, .native = true}));
  auto exception = StartProfilingArguments::parse(Json::parse(R"({"mode": "exception"})"));
  ASSERT_TRUE(exception.ok()) << exception.message();
  EXPECT_EQ(sampling_settings(*exception)->mode, model::SamplingMode::Exception);
  EXPECT_EQ(StartProfilingResponse::from(*exception, 1, "3.12.1").mode, SamplingMode::Exception);
  auto agreeing = StartProfilingArguments::parse(Json::parse(R"({"mode": "wall", "idle": true})"));
  ASSERT_TRUE(agreeing.ok()) << agreeing.message();
  EXPECT_EQ(sampling_settings(*agreeing)->mode, model::SamplingMode::Wall);
  // A mode beside an older switch that names another is refused, naming both.
  auto conflict =
      StartProfilingArguments::parse(Json::parse(R"({"mode": "cpu", "idle": true, "gil": true})"));
  ASSERT_TRUE(conflict.ok()) << conflict.message();
  const auto refused = sampling_settings(*conflict);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.code(), ErrorCode::InvalidArgument);
  EXPECT_NE(refused.message().find("'mode' \"cpu\" conflicts with 'idle' and 'gil'"),
            std::string::npos)
      << refused.message();
  auto unknown = StartProfilingArguments::parse(Json::parse(R"({"mode": "idle"})"));
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.message().find("mode"), std::string::npos) << unknown.message();
  auto nonblocking = StartProfilingArguments::parse(Json::parse(R"({"nonblocking": true})"));
  ASSERT_TRUE(nonblocking.ok()) << nonblocking.message();
  EXPECT_TRUE(sampling_settings(*nonblocking)->nonblocking);
}

TEST(StartProfilingArguments, EachBadFieldGivesAnErrorNamingIt) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"rate": 0})", "'rate' must be between 1 and 10000 samples per second, not 0"},
      {R"({"rate": 10001})", "'rate'"},
      {R"({"rate": 99.5})", "'rate' must be a whole number"},
      {R"({"rate": "fast"})",
       "'rate' must be an integer between 1 and 10000 samples per second, not string"},
      {R"({"rate": 18446744073709551615})", "'rate'"},
      {R"({"native": 1})", "'native' must be true or false, not integer"},
      {R"({"nonblocking": "yes"})", "'nonblocking'"},
      {R"({"idle": []})", "'idle'"},
      {R"({"gil": {}})", "'gil'"},
      {R"({"subprocesses": 0.5})", "'subprocesses'"},
      {R"({"batchIntervalMs": 9})", "'batchIntervalMs' must be between 10 and 5000 ms, not 9"},
      {R"({"batchIntervalMs": 5001})", "'batchIntervalMs'"},
      {R"({"pid": 0})", "'pid' must be between 1 and"},
      {R"({"pid": -3})", "'pid'"},
      {R"({"pid": "123"})", "'pid'"},
      {R"({"native": true, "nonblocking": true})",
       "'native' and 'nonblocking' cannot both be true"},
      {R"([1])", "startProfiling arguments must be a JSON object, not array"},
  };
  for (const auto& [json, message] : cases) {
    auto parsed = StartProfilingArguments::parse(Json::parse(json));
    ASSERT_FALSE(parsed.ok()) << json;
    EXPECT_EQ(parsed.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(parsed.message().find(message), std::string::npos)
        << json << " gave: " << parsed.message();
  }
}

TEST(StopProfilingArguments, ValidatesPathAndFormat) {
  auto none = StopProfilingArguments::parse(Json());
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->output_path);
  auto both =
      StopProfilingArguments::parse({{"outputPath", "/tmp/p.json"}, {"format", "cpuprofile"}});
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(*both->output_path, "/tmp/p.json");
  EXPECT_EQ(both->format, model::ProfileFormat::Cpuprofile);
  auto path_only = StopProfilingArguments::parse({{"outputPath", "/tmp/p.json"}});
  ASSERT_TRUE(path_only.ok());
  EXPECT_EQ(path_only->format, model::ProfileFormat::Speedscope);

  const std::vector<std::pair<Json, std::string>> cases = {
      {{{"outputPath", "relative.json"}}, "'outputPath' must be an absolute path"},
      {{{"outputPath", 3}}, "'outputPath' must be a string"},
      {{{"outputPath", "/tmp/x"}, {"format", "perf"}},
       "'format' must be 'speedscope', 'cpuprofile', 'collapsed', 'flamegraph', 'chrometrace', "
       "'pprof' or 'gecko', not 'perf'"},
      {{{"format", "collapsed"}}, "'format' needs 'outputPath'"},
  };
  for (const auto& [json, message] : cases) {
    auto parsed = StopProfilingArguments::parse(json);
    ASSERT_FALSE(parsed.ok()) << json.dump();
    EXPECT_NE(parsed.message().find(message), std::string::npos) << parsed.message();
  }
}

TEST(ExportProfileArguments, EveryFormatAndTheDebuggerChoice) {
  auto defaults = ExportProfileArguments::parse(Json());
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->format, model::ProfileFormat::Speedscope);
  EXPECT_FALSE(defaults->hide_debugger);
  for (const auto format : model::kProfileFormats) {
    auto parsed = ExportProfileArguments::parse(
        Json{{"format", std::string(to_string(format))}, {"hideDebugger", true}});
    ASSERT_TRUE(parsed.ok()) << to_string(format);
    EXPECT_EQ(parsed->format, format);
    EXPECT_TRUE(parsed->hide_debugger);
  }
  for (const auto& [json, message] : std::vector<std::pair<Json, std::string>>{
           {{{"format", "perf"}}, "'format' must be 'speedscope', 'cpuprofile'"},
           {{{"format", 3}}, "not integer"},
           {{{"hideDebugger", "yes"}}, "'hideDebugger' must be true or false"},
           {Json::array(), "must be a JSON object"}}) {
    auto parsed = ExportProfileArguments::parse(json);
    ASSERT_FALSE(parsed.ok()) << json.dump();
    EXPECT_EQ(parsed.error().code, ErrorCode::InvalidArgument);
    EXPECT_NE(parsed.message().find(message), std::string::npos) << parsed.message();
  }
  auto stop = StopProfilingArguments::parse({{"outputPath", "/tmp/p"}, {"hideDebugger", true}});
  ASSERT_TRUE(stop.ok());
  EXPECT_TRUE(stop->hide_debugger);
}

TEST(Messages, BodiesHaveTheDocumentedFields) {
  StartProfilingArguments enabled;
  enabled.gil = true;
  const Json start = to_json(StartProfilingResponse::from(enabled, 42, "3.12.1"));
  EXPECT_EQ(start.dump(),
            R"({"pid":42,"pythonVersion":"3.12.1","rate":100,"native":false,)"
            R"("nonblocking":false,"mode":"gil","idle":false,"gil":true,"subprocesses":false,)"
            R"("async":"off","batchIntervalMs":100,"stacks":false})");
  auto untested = StartProfilingResponse::from(enabled, 42, "3.16.0");
  untested.warning = "Python 3.16.0 is newer than the versions dapprof was tested with";
  EXPECT_EQ(to_json(untested)["warning"], untested.warning);
  ProfilingStopped stopped{
      StoppedReason::Exited, "process 42 exited", {10, 1.5, 1, 2, std::nullopt, {}}};
  EXPECT_EQ(to_json(stopped).dump(), R"({"reason":"exited","message":"process 42 exited",)"
                                     R"("sampleCount":10,"duration":1.5,"errorCount":1,)"
                                     R"("droppedSampleCount":2})");
  stopped.summary.output_path = "/tmp/p.json";
  EXPECT_EQ(to_json(stopped)["outputPath"], "/tmp/p.json");
  stopped.summary.top_functions = {{"compute", "/app/w.py", 7, 9}};
  EXPECT_EQ(to_json(stopped)["topFunctions"].dump(),
            R"([{"function":"compute","file":"/app/w.py","self":7.0,"total":9.0}])");
  ExportProfileResponse exported{model::ProfileFormat::Collapsed, "txt", "main 3\n",
                                 ContentEncoding::Text, 3};
  EXPECT_EQ(to_json(exported).dump(), R"({"format":"collapsed","fileExtension":"txt",)"
                                      R"("content":"main 3\n","contentEncoding":"text",)"
                                      R"("sampleCount":3})");
}

// How exportProfile carries pprof's bytes: RFC 4648's test vectors, and bytes that are not text.
TEST(Base64, Rfc4648Vectors) {
  const std::vector<std::pair<std::string, std::string>> vectors = {
      {"", ""},
      {"f", "Zg=="},
      {"fo", "Zm8="},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="},
      {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"},
      {std::string("\xff\x00\xfe", 3), "/wD+"}};
  for (const auto& [bytes, encoded] : vectors) EXPECT_EQ(base64(bytes), encoded) << encoded;
}

TEST(Envelope, ResponsesAndEventsAreDapMessages) {
  const Json request = {{"seq", 12}, {"type", "request"}, {"command", "stopProfiling"}};
  EXPECT_EQ(make_response(request, {{"sampleCount", 1}}).dump(),
            R"({"seq":0,"type":"response","request_seq":12,"success":true,)"
            R"("command":"stopProfiling","body":{"sampleCount":1}})");
  const Json error = make_error_response(request, errors::not_profiling());
  EXPECT_EQ(error["success"], false);
  EXPECT_EQ(error["message"], error["body"]["error"]["format"]);
  EXPECT_EQ(error["body"]["error"]["id"], 2004);
  EXPECT_EQ(make_event("profilingStopped", {{"reason", "exited"}})["event"], "profilingStopped");
  // A malformed request still gets a well-formed response.
  const Json odd = make_response(Json{{"seq", "x"}, {"command", 5}});
  EXPECT_EQ(odd["request_seq"], 0);
  EXPECT_EQ(odd["command"], "");
}

TEST(Envelope, ErrorsKeepTheSamplersMessage) {
  // The sampler knows why a read was refused (another user, a tracer already there, Yama) and says
  // what to do; the protocol adds no advice of its own that could contradict it.
  const Error denied{"process 7 is already being traced by process 9 (gdb)",
                     ErrorCode::PermissionDenied};
  const auto mapped = from_error(denied);
  EXPECT_EQ(mapped.id, ProfilingErrorId::PermissionDenied);
  EXPECT_EQ(mapped.message, denied.message);
  EXPECT_EQ(from_error({"not python", ErrorCode::NotPython}).id, ProfilingErrorId::NotPython);
  EXPECT_EQ(from_error({"3.7", ErrorCode::UnsupportedVersion}).id,
            ProfilingErrorId::UnsupportedVersion);
}

}  // namespace
}  // namespace dapprof::protocol
