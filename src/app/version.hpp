// What `dapprof --version` says: the release and the commit it was built from.
#pragma once

#include <string>
#include <string_view>

namespace dapprof::app {

/// The project's version, as in CMakeLists.txt's project() (e.g. "0.1.0").
std::string_view version();

/// The commit built: 12 hex digits, with "-dirty" when the tree had uncommitted changes, or
/// "unknown" (a build outside a git checkout that was not told, see DAPPROF_COMMIT).
std::string_view commit();

/// "dapprof 0.1.0 (commit 0123456789ab)": the line --version prints.
std::string version_line();

}  // namespace dapprof::app
