#pragma once
// The profile as the program's own code sees it: the debugger's frames (model::FrameOrigin)
// left out, the view every writer, the summary and the live view offer as "hide debugger".
#include "formats/profile.hpp"

namespace dapprof::formats {

// Each stack keeps the frames its innermost debugger frame called, unless those are only native
// frames (the debugger waiting on its own socket, say): such a sample, or one ending in the
// debugger, is counted under model::debugger_frame(). Stacks without debugger frames, threads,
// times and weights are unchanged.
Profile without_debugger(const Profile& profile);

}  // namespace dapprof::formats
