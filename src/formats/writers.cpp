#include "formats/writers.hpp"

#include <sstream>

#include "formats/debugger_view.hpp"
#include "formats/instructions.hpp"

namespace dapprof::formats {

void write(model::ProfileFormat format, const Profile& profile, std::ostream& out,
           const WriteOptions& options) {
  using model::ProfileFormat;
  if (options.hide_debugger) {
    WriteOptions shown = options;
    shown.hide_debugger = false;
    return write(format, without_debugger(profile), out, shown);
  }
  if (!shows_instructions(format, options) && has_instructions(profile)) {
    return write(format, without_instructions(profile), out, options);
  }
  switch (format) {
    case ProfileFormat::Speedscope:
      return write_speedscope(profile, out, options);
    case ProfileFormat::Flamegraph:
      return write_flamegraph(profile, out, options);
    case ProfileFormat::Collapsed:
      return write_collapsed(profile, out, options);
    case ProfileFormat::ChromeTrace:
      return write_chrometrace(profile, out, options);
    case ProfileFormat::Cpuprofile:
      return write_cpuprofile(profile, out, options);
    case ProfileFormat::Pprof:
      return write_pprof(profile, out, options);
    case ProfileFormat::Gecko:
      return write_gecko(profile, out, options);
  }
}

std::string to_string(model::ProfileFormat format, const Profile& profile,
                      const WriteOptions& options) {
  std::ostringstream out;
  write(format, profile, out, options);
  return std::move(out).str();
}

}  // namespace dapprof::formats
