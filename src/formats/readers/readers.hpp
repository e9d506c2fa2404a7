#pragma once
// The readers of each input format, and what they share. Internal to the readers: the entry
// point is read_profile.hpp, which detects the format.
#include <optional>
#include <string>
#include <string_view>

#include "common/result.hpp"
#include "formats/json_out.hpp"
#include "formats/profile.hpp"

namespace dapprof::formats::readers {

Result<Profile> read_speedscope(const Json& doc);
Result<Profile> read_cpuprofile(const Json& doc);
Result<Profile> read_collapsed(std::string_view text);
// The profilingData events, one DAP event a line (stream_reader.cpp).
Result<Profile> read_stream(std::string_view content);

// Whether a parsed JSON document is one of the formats.
bool looks_like_speedscope(const Json& doc);
bool looks_like_cpuprofile(const Json& doc);
// Whether the first line of a document is a DAP event (the rest is not looked at).
bool looks_like_stream(std::string_view content);

// A frame from the label the text formats give it (frame_label's "function (file:line)",
// "function (file)", or a bare name), as py-spy and dapprof write them.
model::Frame parse_frame_label(std::string_view label);

// What a pseudo-frame above a stack's root says of the sample's thread or process, as dapprof
// (thread_frame, process_frame) and py-spy write them with --threads or for subprocesses.
struct RootLabel {
  std::optional<pid_t> pid;
  std::string command_line;  // of the process, where the label gives it
  std::optional<std::uint64_t> thread_id;
  std::string thread_name;
};
std::optional<RootLabel> parse_root_label(std::string_view label, RootLabel so_far);

Error malformed(std::string_view what);

}  // namespace dapprof::formats::readers

namespace dapprof::formats::readers {

// Adds the samples a reader finds to a profile: stacks root first (as files hold them), threads
// from the stack's pseudo-frames or the reader's own, each with a TID since the protocol
// identifies threads by it (a made-up one, 1, 2, ..., where the file has none).
class ProfileFiller {
 public:
  explicit ProfileFiller(Profile& profile) : profile_(profile) {}

  std::uint32_t thread(model::ThreadInfo info);
  // `root_first` loses the thread and process pseudo-frames above its root; they name the
  // sample's thread, else it is `fallback` (a thread() of the reader's, or one made up).
  void add(std::vector<model::Frame> root_first, std::int64_t time_us, double weight,
           std::optional<std::uint32_t> fallback = std::nullopt);

 private:
  Profile& profile_;
  std::uint64_t next_tid_ = 1;
  std::optional<std::uint32_t> default_thread_;
  std::vector<model::Frame> innermost_first_;
};

}  // namespace dapprof::formats::readers
