#pragma once
// One frame of a sampled stack: what the sampler reads, the protocol announces and every writer
// shows. Depends on nothing but the standard library.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "model/text.hpp"

namespace dapprof::model {

// What ran in a frame: the Python interpreter's frame, a native (C, C++, Cython) one, an asyncio
// task (with an async sampling mode (SamplingSettings::async), a task's coroutine frames stand
// under a frame of the task itself, and that under the frames of the task awaiting it), or the
// garbage collector: the frame on top of the stack of the thread running a collection. With the
// sampling mode "exception", the exception a thread is handling stands on top of its stack as a
// frame of its own (exception_frame()).
enum class FrameKind : std::uint8_t { Python, Native, Task, Exception, Gc };

// What an asyncio task was doing when sampled. running: its thread's event loop was stepping it;
// waiting: suspended (a task awaiting another is waiting); cancelling: cancel() was asked and the
// task has not finished; unknown: the version does not tell.
enum class TaskState : std::uint8_t { Running, Waiting, Cancelling, Unknown };

// Whose code a frame runs. Independent of the kind: pydevd's compiled (Cython) frames are both
// native and the debugger's. The sampler leaves every frame Program; classify_origin() decides.
enum class FrameOrigin : std::uint8_t { Program, Debugger };

// The bytecode instruction a Python frame was at when sampled (record --opcodes). The names
// point into the sampler's generated opcode tables, which live as long as the program.
struct Instruction {
  std::int32_t offset = -1;  // bytes from the start of the code object's bytecode
  std::uint8_t opcode = 0;
  // The instruction it stands for: itself, or for a specialised form of 3.11+
  // (BINARY_OP_MULTIPLY_INT) or an instrumented one of 3.12+ the family's (BINARY_OP).
  std::uint8_t base_opcode = 0;
  std::string_view name;       // "BINARY_OP_MULTIPLY_INT"; empty for an opcode the table lacks
  std::string_view base_name;  // "BINARY_OP"
  // 3.11+: the source range of the instruction, from the code object's position table
  // (co_positions()); lines 1-based, columns 0-based in UTF-8 bytes as CPython counts them, the
  // end column exclusive; 0 and -1 when the table has none.
  int line = 0;
  int end_line = 0;
  int column = -1;
  int end_column = -1;

  // Specialised, adaptive or instrumented: an opcode shown with its base. Wider than
  // model::specialized(), which is true only for the first kind.
  bool stands_for_another() const { return opcode != base_opcode; }
  bool has_columns() const { return column >= 0; }
  bool operator==(const Instruction& other) const {
    return offset == other.offset && opcode == other.opcode && line == other.line &&
           end_line == other.end_line && column == other.column && end_column == other.end_column;
  }
};

struct Frame {
  Text function;  // qualified name where the Python version has one
  Text file;
  int line = 0;  // 0 when unknown
  FrameKind kind = FrameKind::Python;
  Text module;  // shared object, for native frames
  FrameOrigin origin = FrameOrigin::Program;
  // Where the function starts (co_firstlineno), 0 when unknown: pprof's start_line, and the line
  // the Firefox Profiler keys a function by. Not part of a frame's identity (StackTable), as it
  // follows from the code object like the function and file. Last, so that brace-initialised
  // frames keep their meaning.
  int first_line = 0;
  // Of a task frame: the task's state at that sample, part of the frame's identity, so that a
  // task's running and waiting samples are told apart.
  TaskState task_state = TaskState::Unknown;
  // Of a Python frame sampled with opcodes asked for: its instruction. Part of the frame's
  // identity only when set, so that a profile without opcodes is what it always was.
  std::optional<Instruction> instruction{};

  bool native() const { return kind == FrameKind::Native; }
  bool task() const { return kind == FrameKind::Task; }
  bool exception() const { return kind == FrameKind::Exception; }
  bool gc() const { return kind == FrameKind::Gc; }
  bool python() const { return kind == FrameKind::Python; }
  bool debugger() const { return origin == FrameOrigin::Debugger; }
  bool operator==(const Frame&) const = default;
};

// The frame without its instruction: for the writers that show frames by line, where samples of
// one line at different instructions are one frame.
inline Frame without_instruction(Frame frame) {
  frame.instruction.reset();
  return frame;
}

// The origin of a frame as sampled (its file, or a native frame's module): the one rule of which
// frames are the debugger's (debugpy, pydevd and its _pydev* packages).
FrameOrigin classify_origin(const Frame& frame);
// The frame with its origin set.
Frame classified(Frame frame);

// The stand-in frame for a sample taken in the debugger's own code when its frames are hidden.
Frame debugger_frame();

// The frame of an asyncio task named `name` (its function is the name; it has no file or line).
Frame task_frame(std::string name, TaskState state);
// The stand-in of an event loop's own frames (run_forever, _run_once, Handle._run, ...) under
// the tasks it runs, with an async sampling mode: one frame at the root of every task's stack.
Frame event_loop_frame();
// The frame of an exception being handled, of type `type_name`: "(exception) ValueError", without
// file or line.
Frame exception_frame(std::string_view type_name);
// The frame of the garbage collector, on top of the stack of the thread collecting: its function
// is "(garbage collection)", its place (frame_place) "<GC>" as CPython's own sampler writes it.
// The generation collected is not part of it: CPython keeps it only in a local variable of the
// collector, out of a reader's reach.
Frame gc_frame();
inline constexpr std::string_view kGcFunction = "(garbage collection)";
inline constexpr std::string_view kGcPlace = "<GC>";
// "running", "waiting", "cancelling" or "unknown", as the protocol and every format name it.
std::string_view task_state_name(TaskState state);
// Where a frame is, as the export formats show it beside its function: its file; a native frame
// without one, its shared object; the garbage collector's, "<GC>"; a task frame, "<task>" (as
// CPython's own sampler writes it) followed by the state unless running ("<task waiting>"), so that
// a task's running and waiting frames, distinct frames, also read apart.
std::string frame_place(const Frame& frame);
// The task state a place of frame_place names, if it names one.
std::optional<TaskState> task_place_state(std::string_view place);
// The inverse of frame_place, for the readers of exported files: a frame without a line placed
// in "<task ...>" becomes a task frame, in "<GC>" the garbage collector's, any other gets `place`
// as its file.
void set_place(Frame& frame, std::string place);
// The state so named; none for another name.
std::optional<TaskState> task_state_named(std::string_view name);

}  // namespace dapprof::model
