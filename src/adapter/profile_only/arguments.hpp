#pragma once
// The launch and attach arguments of a profile-only session, checked before anything starts:
// each refusal says what is wrong and what to do.
#include <sys/types.h>

#include <string>

#include "adapter/profile_only/program.hpp"
#include "common/result.hpp"
#include "protocol/json.hpp"

namespace dapprof::adapter::profile_only {

using protocol::Json;

// {program | module, args: [..], cwd, python: "python3" | [argv..], env: {K: V}}.
// `default_python` when "python" is absent.
Result<LaunchSpec> parse_launch(const Json& arguments, const std::string& default_python);

// {processId: N | "N"}: a live process other than the daemon, whose memory this daemon can read
// and which runs a CPython it can find.
Result<pid_t> parse_attach(const Json& arguments);

}  // namespace dapprof::adapter::profile_only
