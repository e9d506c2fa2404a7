#pragma once
// Profile writers. Each writes one complete document for the whole profile.
#include <ostream>
#include <string>

#include "formats/profile.hpp"
#include "model/profile_format.hpp"

namespace dapprof::formats {

// speedscope's file format: one "sampled" profile per thread, weights in samples.
void write_speedscope(const Profile& profile, std::ostream& out, const WriteOptions& options = {});
// A self-contained interactive flame graph (SVG with inline script and style).
void write_flamegraph(const Profile& profile, std::ostream& out, const WriteOptions& options = {});
// Collapsed stacks, "root;...;leaf count" one line per distinct stack, sorted.
void write_collapsed(const Profile& profile, std::ostream& out, const WriteOptions& options = {});
// Chrome trace events (B/E pairs per thread), for chrome://tracing and Perfetto.
void write_chrometrace(const Profile& profile, std::ostream& out, const WriteOptions& options = {});
// V8's .cpuprofile, which VS Code and Chrome DevTools open.
void write_cpuprofile(const Profile& profile, std::ostream& out, const WriteOptions& options = {});
// pprof's profile.proto, gzipped: `go tool pprof`, pprof and Grafana Pyroscope read it. Binary; a
// failure to compress sets the stream's badbit.
void write_pprof(const Profile& profile, std::ostream& out, const WriteOptions& options = {});
// The Gecko profile JSON that the Firefox Profiler (profiler.firefox.com) opens.
void write_gecko(const Profile& profile, std::ostream& out, const WriteOptions& options = {});

// The entry point: applies options.hide_debugger, then the format's writer.
void write(model::ProfileFormat format, const Profile& profile, std::ostream& out,
           const WriteOptions& options = {});
std::string to_string(model::ProfileFormat format, const Profile& profile,
                      const WriteOptions& options = {});

}  // namespace dapprof::formats
