#pragma once
// The instruction sys.monitoring hides (3.12+). A tool (a debugger, coverage) instruments a code
// object by rewriting its bytecode in place: INSTRUMENTED_LINE replaces the instruction at a
// line's start and INSTRUMENTED_INSTRUCTION any other; each keeps the opcode it replaced in the
// code object's monitoring data, one entry per code unit (the line's first, then the
// instruction's). What runs there is that opcode, which the program may even re-specialise, so
// it is read again at each sample rather than remembered.
#include <cstdint>
#include <span>
#include <vector>

#include "sampler/python/code_cache.hpp"
#include "sampler/python/objects.hpp"
#include "sampler/python/opcodes.hpp"

namespace dapprof::sampler::python {

class Instrumentation {
 public:
  // For the target whose objects and instruction set these are; inert on versions without
  // sys.monitoring (or a layout without its fields).
  Instrumentation(const Objects& objects, const OpcodeSet& set);

  // Whether `op` stands in for an opcode kept in the monitoring data.
  bool hides(std::uint8_t op) const { return op == line_ || op == instruction_; }
  // Whether anything can be read of it on this version.
  bool readable() const { return readable_; }

  // One instrumented instruction of a sample: `op` as read at code unit `unit` of the code object
  // whose CodeInfo is `info` and whose header gave its monitoring data's address `data`.
  struct Hidden {
    const CodeInfo* info;
    Address data;
    std::int64_t unit;
    std::uint8_t op;  // in: as read; out: the opcode it replaced, or as read if that is unreadable
  };
  // Resolves every one of `hidden` in one batched read (plus one small read per code object whose
  // monitoring data is new to its CodeInfo). Never fails: what cannot be read stays as read.
  void originals(std::span<Hidden> hidden);

  // Puts back into `bytecode`, a copy of the code object's whose monitoring data is at `data`, the
  // opcode each instrumented instruction replaced, so that the inline caches after it can be
  // skipped. False if the monitoring data could not be read: the copy is then not to be used.
  bool restore(std::vector<std::uint8_t>& bytecode, const CodeInfo& info, Address data);

 private:
  // Brings info.monitoring up to date for monitoring data at `data`: false if unreadable.
  bool locate(const CodeInfo& info, Address data) const;
  // The opcode `original` stands for, checked: -1 if it is no instruction an instrumented one can
  // have replaced (a torn or stale read).
  int checked(int original) const;

  const Objects& objects_;
  const OpcodeSet& set_;
  int line_ = -1;
  int instruction_ = -1;
  int cache_ = -1;
  bool readable_ = false;
  // Scratch of originals(), kept for the next sample.
  std::vector<std::uint8_t> line_bytes_;
  std::vector<std::uint8_t> instruction_bytes_;
  std::vector<process::ProcessMemory::Chunk> chunks_;
  std::vector<int> line_chunk_;
  std::vector<int> instruction_chunk_;
  std::vector<char> failed_;
};

}  // namespace dapprof::sampler::python
