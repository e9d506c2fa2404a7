// A flame graph in the manner of flamegraph.pl / inferno: the root ("all") at the bottom, each
// node as wide as its share of the samples, children sorted by name.
#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <cmath>

#include "formats/call_tree.hpp"
#include "formats/flamegraph_script.hpp"
#include "formats/text.hpp"
#include "formats/writers.hpp"

namespace dapprof::formats {
namespace {

constexpr double kWidth = 1200;
constexpr double kXPad = 10;
constexpr double kFrameHeight = 16;
constexpr double kTop = 40;     // title and controls
constexpr double kBottom = 28;  // details line
constexpr double kCharWidth = 12 * 0.59;
// Narrower nodes (and everything above them) are left out: invisible, and they would make the
// file of a long recording huge.
constexpr double kMinWidth = 0.1;

std::string count_text(double n) {
  return std::abs(n - std::round(n)) < 1e-9 ? fmt::format("{}", std::llround(n))
                                            : fmt::format("{:.2f}", n);
}

// Warm colours, stable per function name so the same function looks the same everywhere.
std::string colour(const std::string& name) {
  const auto h = XXH3_64bits(name.data(), name.size());
  return fmt::format("rgb({},{},{})", 205 + h % 50, (h >> 8) % 230, (h >> 16) % 55);
}

// The first `chars` code points of a UTF-8 string (which is already valid).
std::string truncated_label(const std::string& label, double width) {
  const auto fits = static_cast<long>(std::floor((width - 6) / kCharWidth));
  if (fits < 3) return {};
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < label.size(); ++i) {
    if ((static_cast<unsigned char>(label[i]) & 0xC0) != 0x80) starts.push_back(i);
  }
  if (static_cast<long>(starts.size()) <= fits) return label;
  return label.substr(0, starts[static_cast<std::size_t>(fits - 2)]) + "..";
}

struct Layout {
  const CallTree& tree;
  std::vector<std::string> labels;  // per tree frame, valid UTF-8
  double scale = 0;                 // pixels per sample
  double height = 0;
  std::ostream& out;

  void node(std::uint32_t id, double x) {
    const auto& n = tree.nodes()[id];
    const double w = n.total * scale;
    if (w < kMinWidth) return;
    const std::string& label = n.frame == CallNode::kNoFrame ? labels.back() : labels[n.frame];
    const double y = height - kBottom - (n.depth + 1) * kFrameHeight;
    const double total = tree.nodes()[CallTree::kRoot].total;
    const std::string name = xml_escape(label);
    out << fmt::format(
        "<g class=\"f\" data-n=\"{}\" data-d=\"{}\" data-x=\"{:.4f}\" data-w=\"{:.4f}\" "
        "data-s=\"{}\"><title>{}\n{} samples ({:.2f}%)</title>"
        "<rect x=\"{:.4f}\" y=\"{:.1f}\" width=\"{:.4f}\" height=\"{:.1f}\" fill=\"{}\" rx=\"2\"/>"
        "<text x=\"{:.4f}\" y=\"{:.1f}\">{}</text></g>\n",
        name, n.depth, x, w, count_text(n.total), name, count_text(n.total),
        100.0 * n.total / total, x, y, w, kFrameHeight - 1, colour(label), x + 3,
        y + kFrameHeight - 4.5, xml_escape(truncated_label(label, w)));
    std::vector<std::uint32_t> children = n.children;
    std::sort(children.begin(), children.end(), [&](std::uint32_t a, std::uint32_t b) {
      return labels[tree.nodes()[a].frame] < labels[tree.nodes()[b].frame];
    });
    for (const auto c : children) {
      node(c, x);
      x += tree.nodes()[c].total * scale;
    }
  }
};

}  // namespace

void write_flamegraph(const Profile& profile, std::ostream& out, const WriteOptions& options) {
  const CallTree tree(profile, options);
  const double total = tree.nodes()[CallTree::kRoot].total;
  const double height = kTop + (tree.max_depth() + 1) * kFrameHeight + kBottom;
  const std::string title = xml_escape("Flame Graph: " + profile.name);

  out << "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n";
  out << fmt::format(
      "<svg version=\"1.1\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "xmlns=\"http://www.w3.org/2000/svg\" onload=\"init(evt)\">\n",
      kWidth, height);
  out << "<style type=\"text/css\"><![CDATA[" << flamegraph::kStyle << "]]></style>\n";
  out << fmt::format(
      "<script type=\"text/ecmascript\"><![CDATA[\nvar W = {}, XPAD = {}, CHARW = {};", kWidth,
      kXPad, kCharWidth);
  out << flamegraph::kScript << "]]></script>\n";
  out << fmt::format(
      "<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"rgb(248,248,248)\"/>\n"
      "<text id=\"title\" x=\"{}\" y=\"24\">{}</text>\n"
      "<text id=\"unzoom\" class=\"ctl hide\" x=\"{}\" y=\"24\">Reset Zoom</text>\n"
      "<text id=\"search\" class=\"ctl\" x=\"{}\" y=\"24\" text-anchor=\"end\">Search</text>\n"
      "<text id=\"details\" x=\"{}\" y=\"{}\"> </text>\n"
      "<text id=\"matched\" class=\"hide\" x=\"{}\" y=\"{}\" text-anchor=\"end\"> </text>\n",
      kWidth, height, kWidth / 2, title, kXPad, kWidth - kXPad, kXPad, height - 10, kWidth - kXPad,
      height - 10);

  out << "<g id=\"frames\">\n";
  if (total > 0) {
    Layout layout{tree, {}, (kWidth - 2 * kXPad) / total, height, out};
    for (const auto& f : tree.frames()) layout.labels.push_back(valid_utf8(frame_label(f)));
    layout.labels.emplace_back("all");  // the root's label
    layout.node(CallTree::kRoot, kXPad);
  } else {
    out << fmt::format("<text x=\"{}\" y=\"{}\">No samples</text>\n", kXPad, kTop + 12);
  }
  out << "</g>\n</svg>\n";
}

}  // namespace dapprof::formats
