#pragma once
// The flame graph's inline style and script (zoom, reset, search), kept apart from the layout.
#include <string_view>

namespace dapprof::formats::flamegraph {

extern const std::string_view kStyle;
// Expects globals W (image width), XPAD (side margin) and CHARW (average glyph width) set before
// it, and elements #details, #matched, #unzoom, #search and g.f frames carrying data-n (label),
// data-x, data-w (layout at zoom 1) and data-d (depth).
extern const std::string_view kScript;

}  // namespace dapprof::formats::flamegraph
