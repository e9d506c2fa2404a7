// py-spy's "raw" output, the input of flamegraph.pl and inferno.
#include <fmt/format.h>

#include <cmath>
#include <map>

#include "formats/text.hpp"
#include "formats/writers.hpp"

namespace dapprof::formats {

void write_collapsed(const Profile& profile, std::ostream& out, const WriteOptions& options) {
  const DisplayStacks display(profile, options);
  std::vector<std::string> labels;
  labels.reserve(display.frames().size());
  for (const auto& f : display.frames()) {
    auto label = valid_utf8(frame_label(f));
    // A line break would split the record.
    for (auto& c : label) c = (c == '\n' || c == '\r') ? ' ' : c;
    labels.push_back(std::move(label));
  }

  std::map<std::string, double> counts;  // sorted, one entry per distinct line
  for (const auto& sample : profile.samples()) {
    // Like py-spy: a thread without Python frames (starting, or in C only) makes no line.
    if (profile.stacks()[sample.stack].empty()) continue;
    const auto path = display.path(sample);
    std::string line;
    for (const auto frame : path) {
      if (!line.empty()) line += ';';
      line += labels[frame];
    }
    counts[line] += sample.weight;
  }
  for (const auto& [line, count] : counts) {
    out << line << ' ' << fmt::format("{}", std::llround(count)) << '\n';
  }
}

}  // namespace dapprof::formats
