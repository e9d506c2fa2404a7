#include "formats/writers.hpp"

#include <sstream>

namespace dapprof::formats {

std::optional<Format> parse_format(std::string_view name) {
  for (auto f : {Format::Speedscope, Format::Flamegraph, Format::Raw, Format::ChromeTrace,
                 Format::CpuProfile}) {
    if (format_name(f) == name) return f;
  }
  return std::nullopt;
}

std::string_view format_name(Format format) {
  switch (format) {
    case Format::Speedscope:
      return "speedscope";
    case Format::Flamegraph:
      return "flamegraph";
    case Format::Raw:
      return "raw";
    case Format::ChromeTrace:
      return "chrometrace";
    case Format::CpuProfile:
      return "cpuprofile";
  }
  return "unknown";
}

std::string_view file_extension(Format format) {
  switch (format) {
    case Format::Speedscope:
      return "json";
    case Format::Flamegraph:
      return "svg";
    case Format::Raw:
      return "txt";
    case Format::ChromeTrace:
      return "json";
    case Format::CpuProfile:
      return "cpuprofile";
  }
  return "out";
}

void write(Format format, const Profile& profile, std::ostream& out, const WriteOptions& options) {
  switch (format) {
    case Format::Speedscope:
      return write_speedscope(profile, out, options);
    case Format::Flamegraph:
      return write_flamegraph(profile, out, options);
    case Format::Raw:
      return write_collapsed(profile, out, options);
    case Format::ChromeTrace:
      return write_chrometrace(profile, out, options);
    case Format::CpuProfile:
      return write_cpuprofile(profile, out, options);
  }
}

std::string to_string(Format format, const Profile& profile, const WriteOptions& options) {
  std::ostringstream out;
  write(format, profile, out, options);
  return std::move(out).str();
}

}  // namespace dapprof::formats
