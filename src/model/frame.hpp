#pragma once
// One frame of a sampled stack: what the sampler reads, the protocol announces and every writer
// shows. Depends on nothing but the standard library.
#include <cstdint>
#include <string>

namespace dapprof::model {

// What ran in a frame: the Python interpreter's frame, or a native (C, C++, Cython) one.
enum class FrameKind : std::uint8_t { Python, Native };

// Whose code a frame runs. Independent of the kind: pydevd's compiled (Cython) frames are both
// native and the debugger's. The sampler leaves every frame Program; classify_origin() decides.
enum class FrameOrigin : std::uint8_t { Program, Debugger };

struct Frame {
  std::string function;  // qualified name where the Python version has one
  std::string file;
  int line = 0;  // 0 when unknown
  FrameKind kind = FrameKind::Python;
  std::string module;  // shared object, for native frames
  FrameOrigin origin = FrameOrigin::Program;
  // Where the function starts (co_firstlineno), 0 when unknown: pprof's start_line, and the line
  // the Firefox Profiler keys a function by. Not part of a frame's identity (StackTable), as it
  // follows from the code object like the function and file. Last, so that brace-initialised
  // frames keep their meaning.
  int first_line = 0;

  bool native() const { return kind == FrameKind::Native; }
  bool debugger() const { return origin == FrameOrigin::Debugger; }
  bool operator==(const Frame&) const = default;
};

// The origin of a frame as sampled (its file, or a native frame's module): the one rule of which
// frames are the debugger's (debugpy, pydevd and its _pydev* packages).
FrameOrigin classify_origin(const Frame& frame);
// The frame with its origin set.
Frame classified(Frame frame);

// The stand-in frame for a sample taken in the debugger's own code when its frames are hidden.
Frame debugger_frame();

}  // namespace dapprof::model
