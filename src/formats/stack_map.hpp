#pragma once
// A profile whose stacks are the stacks of another, each rewritten once by a function (however
// many samples share it): how the views of a profile (without the debugger, with short file
// names) are made. Threads, times and weights are kept.
#include <functional>
#include <span>
#include <vector>

#include "formats/profile.hpp"

namespace dapprof::formats {

// Receives a stack of `profile` (innermost first) and fills `out` with the new one.
using StackRewrite =
    std::function<void(std::span<const model::Frame> stack, std::vector<model::Frame>& out)>;

Profile map_stacks(const Profile& profile, const StackRewrite& rewrite);

}  // namespace dapprof::formats
