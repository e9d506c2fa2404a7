// `dapprof convert`: a profile file recorded elsewhere (or by dapprof), read and written again in
// any format dapprof writes, or as the profilingData events that the VS Code extension shows.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "adapter/profiling/output.hpp"
#include "app/cli/format_names.hpp"
#include "app/cli/options.hpp"
#include "app/cli/profile_stream.hpp"
#include "formats/readers/read_profile.hpp"
#include "formats/writers.hpp"

namespace dapprof::app::cli {

int run_convert(const ConvertOptions& o) {
  auto read = formats::read_profile_file(o.input);
  if (!read) {
    fmt::print(stderr, "dapprof: error: {}\n", read.message());
    return 1;
  }
  const auto& profile = read->profile;
  const bool to_stdout = o.output.empty() || o.output == "-";
  if (o.format == "stream") {
    if (!to_stdout) {
      fmt::print(stderr, "dapprof: error: the stream format goes to stdout only (no --output)\n");
      return 2;
    }
    StreamOptions stream;
    stream.encoding = o.frames ? protocol::Encoding::Frames : protocol::Encoding::Stacks;
    stream.message =
        fmt::format("read from {} ({})", std::filesystem::path(o.input).filename().string(),
                    formats::input_format_name(read->format));
    if (auto written = write_profile_stream(profile, std::cout, stream); !written) {
      fmt::print(stderr, "dapprof: error: {}\n", written.message());
      return 1;
    }
    return 0;
  }
  const auto format = parse_format(o.format);
  if (!format) {
    fmt::print(stderr, "dapprof: error: unknown format '{}'\n", o.format);
    return 2;
  }
  const formats::WriteOptions options{
      .threads = o.threads, .hide_debugger = o.hide_debugger, .instruction_frames = true};
  if (to_stdout) {
    formats::write(*format, profile, std::cout, options);
    std::cout.flush();
    if (!std::cout) {
      fmt::print(stderr, "dapprof: error: writing to stdout failed\n");
      return 1;
    }
    return 0;
  }
  if (auto written = adapter::profiling::write_profile_file(profile, *format, options, o.output);
      !written) {
    fmt::print(stderr, "dapprof: error: {}\n", written.message());
    return 1;
  }
  fmt::print(stderr, "dapprof> Wrote {} data to '{}' ({} profile, {} samples).\n", o.format,
             o.output, formats::input_format_name(read->format), profile.total_weight());
  return 0;
}

}  // namespace dapprof::app::cli
