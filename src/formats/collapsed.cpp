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
    const auto path = display.path(sample);
    if (path.empty()) continue;  // nothing to draw for a thread without Python frames
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
