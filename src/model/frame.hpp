#pragma once
// One frame of a sampled stack: what the sampler reads, the protocol announces and every writer
// shows. Depends on nothing but the standard library.
#include <cstdint>
#include <string>

namespace dapprof::model {

// What ran in a frame. The sampler gives Python or Native; Debugger is for frames of the debugger
// itself (debugpy, pydevd), which a view of the program may hide.
enum class FrameKind : std::uint8_t { Python, Native, Debugger };

struct Frame {
  std::string function;  // qualified name where the Python version has one
  std::string file;
  int line = 0;  // 0 when unknown
  FrameKind kind = FrameKind::Python;
  std::string module;  // shared object, for native frames

  bool native() const { return kind == FrameKind::Native; }
  bool operator==(const Frame&) const = default;
};

}  // namespace dapprof::model
