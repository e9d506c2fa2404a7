#pragma once
// What the walker needs of a code object (names, file, line table), cached by address. A code
// object can be freed and another allocated at the same address, so each hit is re-validated
// against the header words read with the frame: the name, file, qualname and line table pointers
// and the first line must all be unchanged.
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/result.hpp"
#include "model/text.hpp"
#include "sampler/python/line_table.hpp"
#include "sampler/python/objects.hpp"

namespace dapprof::sampler::python {

struct CodeInfo {
  // Identity, as read from the code object's header.
  Address name_ptr = 0;
  Address qualname_ptr = 0;
  Address filename_ptr = 0;
  Address linetable_ptr = 0;
  Address code_bytes_ptr = 0;  // before 3.11: co_code, a bytes object
  int first_line = 0;
  // Decoded.
  // Shared with every frame made from this code object (a copy is a reference count).
  model::Text function;  // co_qualname where the version has it, else co_name
  model::Text file;
  std::vector<std::uint8_t> linetable;
  int first_traceable = 0;       // 3.11+: _co_firsttraceable (code units)
  std::int64_t code_units = -1;  // 3.11+: the object's size in code units, at most 2^28; else -1

  // Memoised: the same few instructions of a code object are sampled over and over. A small
  // direct-mapped table: no allocation, no hashing beyond the offset's low bits.
  int line_at(LineTableFormat format, std::int64_t byte_offset) const {
    auto& slot = lines[static_cast<std::uint64_t>(byte_offset / 2) % lines.size()];
    if (slot.offset == byte_offset) return slot.line;
    const int line = line_for_offset(format, linetable, first_line, byte_offset);
    slot = {byte_offset, line};
    return line;
  }
  struct LineSlot {
    std::int64_t offset = -1;
    int line = 0;
  };
  mutable std::array<LineSlot, 16> lines{};

  // Read for record --opcodes, on the first sample of the code object that needs it: its bytecode
  // as it was then (3.11+: co_code_adaptive, whose instructions specialise as the program runs,
  // so only instruction boundaries are taken from this copy; before: co_code, which never
  // changes), empty if unreadable. Memoised per offset like the lines: where the instruction
  // covering it starts, -1 for none, and its source positions (3.11+).
  mutable std::vector<std::uint8_t> bytecode;
  mutable bool bytecode_read = false;
  struct InstructionSlot {
    std::int64_t offset = -1;
    std::int64_t start = -1;
    Positions positions;
  };
  mutable std::array<InstructionSlot, 16> instructions{};
  // 3.12+: where sys.monitoring keeps the opcodes it replaced in this code object, as read from
  // its monitoring data at `data` (see instrumented.hpp); 0 for an array not allocated then.
  struct Monitoring {
    Address data = 0;
    Address lines = 0;            // the first entry, past any header
    Address per_instruction = 0;  // one opcode per code unit
    std::uint8_t line_entry = 0;  // bytes per entry of `lines`
  };
  mutable Monitoring monitoring;

  // 3.11+: whether an instruction pointer `byte_offset` bytes past the bytecode's start can be
  // this code's (one before the first instruction is: a frame not started yet). A frame struct
  // copied while the program rewrote it may pair one code object with another's pointer.
  bool holds_offset(std::int64_t byte_offset) const {
    return code_units < 0 || (byte_offset >= -2 && byte_offset <= code_units * 2);
  }
};

class CodeCache {
 public:
  explicit CodeCache(const Objects& objects);

  // `header` holds layout.code_size bytes read from `code`. Reads names and line table on a miss.
  Result<const CodeInfo*> get(Address code, std::span<const std::byte> header);

  // What is known of the code object at `code` from earlier reads, unchecked (it may be another
  // one's by now); null if nothing.
  const CodeInfo* peek(Address code) const {
    const auto it = cache_.find(code);
    return it == cache_.end() ? nullptr : &it->second;
  }

  LineTableFormat format() const { return format_; }
  std::size_t size() const { return cache_.size(); }
  std::uint64_t misses() const { return misses_; }

 private:
  CodeInfo identity(std::span<const std::byte> header) const;

  const Objects& objects_;
  LineTableFormat format_;
  std::unordered_map<Address, CodeInfo> cache_;
  std::uint64_t misses_ = 0;
};

}  // namespace dapprof::sampler::python
