// Which format a document is in, from its content: JSON is told apart by its fields, anything
// else is read as collapsed stacks. Formats dapprof writes but does not read are named in the
// error, so that a user knows the file is not broken.
#include "formats/readers/read_profile.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "formats/readers/readers.hpp"

namespace dapprof::formats {
namespace {

Error unreadable(std::string_view name, std::string_view why) {
  return Error{fmt::format("{}: {}", name, why), ErrorCode::InvalidArgument};
}

// A JSON document dapprof does not read, by its fields.
std::string unsupported_json(const Json& doc) {
  if (doc.is_array() || (doc.is_object() && doc.contains("traceEvents")))
    return "it is a Chrome trace (trace events), which dapprof writes but does not read; open "
           "speedscope, cpuprofile or collapsed files";
  if (doc.is_object() && doc.contains("meta") && doc.contains("threads"))
    return "it is a Firefox Profiler (Gecko) profile, which dapprof writes but does not read";
  return "it is JSON, but neither a speedscope profile (\"shared\" and \"profiles\") nor a "
         "cpuprofile (\"nodes\" with \"callFrame\")";
}

template <typename Read>
Result<ReadProfile> read_as(InputFormat format, std::string_view name, Read read) {
  try {
    auto profile = read();
    if (!profile)
      return unreadable(name, fmt::format("not a valid {} profile: {}", input_format_name(format),
                                          profile.message()));
    return ReadProfile{format, std::move(*profile)};
  } catch (const nlohmann::json::exception& e) {
    // A field of the wrong type or missing: nlohmann's message names the type and the key.
    return unreadable(
        name, fmt::format("not a valid {} profile: {}", input_format_name(format), e.what()));
  }
}

}  // namespace

std::string_view input_format_name(InputFormat format) {
  switch (format) {
    case InputFormat::Speedscope:
      return "speedscope";
    case InputFormat::Cpuprofile:
      return "cpuprofile";
    case InputFormat::Collapsed:
      return "collapsed";
    case InputFormat::Stream:
      return "stream";
  }
  return "unknown";
}

Result<ReadProfile> read_profile(std::string_view content, std::string_view name) {
  if (content.size() >= 2 && static_cast<unsigned char>(content[0]) == 0x1f &&
      static_cast<unsigned char>(content[1]) == 0x8b)
    return unreadable(name,
                      "it is gzip-compressed (pprof?); dapprof reads speedscope, "
                      "cpuprofile and collapsed files");
  const auto first = content.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return unreadable(name, "the file is empty");
  // A stream is JSON a line, not one document: told by its first line.
  if (content[first] == '{' && readers::looks_like_stream(content))
    return read_as(InputFormat::Stream, name, [&] { return readers::read_stream(content); });
  if (content[first] == '{' || content[first] == '[') {
    // Parsed as a whole: the readers walk the document more than once (frames, then samples).
    const auto doc = Json::parse(content, nullptr, false);
    if (doc.is_discarded())
      return unreadable(name, "it starts like JSON but is not valid JSON (cut short?)");
    if (readers::looks_like_speedscope(doc))
      return read_as(InputFormat::Speedscope, name, [&] { return readers::read_speedscope(doc); });
    if (readers::looks_like_cpuprofile(doc))
      return read_as(InputFormat::Cpuprofile, name, [&] { return readers::read_cpuprofile(doc); });
    return unreadable(name, unsupported_json(doc));
  }
  if (content.find('\0') != std::string_view::npos)
    return unreadable(name,
                      "it is a binary file, not a profile dapprof reads (speedscope, "
                      "cpuprofile or collapsed stacks)");
  return read_as(InputFormat::Collapsed, name, [&] { return readers::read_collapsed(content); });
}

Result<ReadProfile> read_profile_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Error{fmt::format("cannot open {}: {}", path, std::strerror(errno)),
                 ErrorCode::InvalidArgument};
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) return Error{fmt::format("cannot read {}", path), ErrorCode::InvalidArgument};
  auto read = read_profile(content.view(), path);
  if (read) {
    // The file's name (without directories and extensions) titles the profile, unless it has one.
    if (read->profile.name == "dapprof" || read->profile.name.empty()) {
      auto base = path.substr(path.find_last_of('/') + 1);
      read->profile.name = base.substr(0, base.find('.'));
    }
  }
  return read;
}

}  // namespace dapprof::formats
