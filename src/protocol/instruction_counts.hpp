#pragma once
// With opcodes: how many samples each bytecode instruction took, for profilingData's
// newInstructions and instructionCounts. The stream's frames stay those of lines (an instruction
// is not part of a frame's identity on the wire, so that every view of a profile is the same with
// or without opcodes); the instructions are counted beside them, per frame, which is all a client
// needs to show which expression of a line is hot.
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "model/frame.hpp"
#include "protocol/frame_table.hpp"

namespace dapprof::protocol {

using InstructionId = std::uint32_t;

struct InstructionDefinition {
  InstructionId id = 0;
  FrameId frame = 0;
  model::Instruction instruction;
};

// Samples at one instruction since the previous event.
struct InstructionCount {
  InstructionId id = 0;
  std::uint64_t own = 0;    // the innermost Python frame was at it
  std::uint64_t total = 0;  // a frame was at it anywhere on the stack, once per sample
  bool operator==(const InstructionCount&) const = default;
};

// One sample's frames that carry an instruction, innermost first.
struct InstructionSite {
  FrameId frame = 0;
  const model::Instruction* instruction = nullptr;
};

class InstructionCounter {
 public:
  // A run keeps at most this many distinct instructions (far more than any program's hot code);
  // samples at further ones are not counted, so that memory stays bounded.
  static constexpr std::size_t kMaxInstructions = 1 << 20;

  void add(std::span<const InstructionSite> innermost_first);
  // The definitions and counts gathered since the previous take(), counts by ID.
  std::vector<InstructionDefinition> take_definitions();
  std::vector<InstructionCount> take_counts();
  bool empty() const { return new_.empty() && pending_.empty(); }
  std::uint64_t uncounted() const { return uncounted_; }

 private:
  struct Key {
    FrameId frame;
    std::int32_t offset;
    std::uint8_t opcode;
    int line, end_line, column, end_column;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const noexcept;
  };
  const InstructionId* intern(const InstructionSite& site);

  std::unordered_map<Key, InstructionId, KeyHash> ids_;
  std::vector<InstructionDefinition> new_;
  std::unordered_map<InstructionId, InstructionCount> pending_;
  std::vector<InstructionId> seen_;  // this sample's, to count each once
  std::uint64_t uncounted_ = 0;
};

// Counts merged by ID, for two batches sent as one.
std::vector<InstructionCount> merge_counts(std::vector<InstructionCount> a,
                                           const std::vector<InstructionCount>& b);

}  // namespace dapprof::protocol
