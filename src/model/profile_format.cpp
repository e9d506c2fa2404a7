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
  }
  return "out";
}

}  // namespace dapprof::model
