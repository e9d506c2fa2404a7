#include "model/profile_format.hpp"

namespace dapprof::model {

std::string_view file_extension(ProfileFormat format) {
  switch (format) {
    case ProfileFormat::Speedscope:
      return "json";
    case ProfileFormat::Flamegraph:
      return "svg";
    case ProfileFormat::Collapsed:
      return "txt";
    case ProfileFormat::ChromeTrace:
      return "json";
    case ProfileFormat::Cpuprofile:
      return "cpuprofile";
    case ProfileFormat::Pprof:
      return "pb.gz";  // what `go tool pprof` itself names its files
    case ProfileFormat::Gecko:
      return "json";  // what the Firefox Profiler's own uploads and samply's files are
  }
  return "out";
}

bool is_binary(ProfileFormat format) { return format == ProfileFormat::Pprof; }

}  // namespace dapprof::model
