#pragma once
// Short file names in the formats people read (py-spy's default; record --full-filenames keeps
// the paths): a frame's file is shown relative to the directory above its package, so
// /usr/lib/python3.11/json/decoder.py reads json/decoder.py and /home/me/app/main.py main.py.
#include <functional>
#include <string>

#include "formats/profile.hpp"
#include "model/profile_format.hpp"

namespace dapprof::formats {

// Whether a format is read by people rather than by tools that open the source files (those
// keep full paths: cpuprofile's url, which VS Code and DevTools open; pprof's file names, which
// `pprof -list` reads).
bool shows_short_files(model::ProfileFormat format);

// The profile with each frame's file replaced by shorten(file); frames that become equal merge.
Profile with_files(const Profile& profile,
                   const std::function<std::string(const std::string&)>& shorten);

}  // namespace dapprof::formats
