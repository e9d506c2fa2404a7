#pragma once
// One CPython version's instruction set (from opcodes_generated.cpp), by opcode: names, the base
// instruction of a specialised or instrumented one, and where instructions start in bytecode
// whose inline caches (3.11+) and EXTENDED_ARG prefixes are not instructions of their own.
#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "model/frame.hpp"

namespace dapprof::sampler::python {

class OpcodeSet {
 public:
  // The set of version major.minor; null if none was generated for it.
  static const OpcodeSet* of(int major, int minor);

  std::string_view name(std::uint8_t op) const { return ops_[op].name; }
  std::uint8_t base(std::uint8_t op) const { return ops_[op].base; }
  // Whether the version has an instruction `op`.
  bool known(std::uint8_t op) const { return !ops_[op].name.empty(); }
  // The inline cache entries (code units) that follow `op` (its family's for a specialised one).
  std::uint8_t caches(std::uint8_t op) const { return ops_[ops_[op].base].caches; }
  // The opcode named `name`; -1 if the version has none.
  int opcode(std::string_view name) const;
  std::string_view measured_on() const { return measured_on_; }

  // The byte offset at which the instruction covering byte `offset` of `code` starts: `offset`
  // itself when it is one, else the instruction whose inline cache it is in (on 3.11-3.12 a
  // calling frame's pointer rests on the last cache entry of its CALL). `code` may hold
  // specialised forms: their caches are their family's. -1 if `offset` is outside `code`.
  std::int64_t instruction_start(std::span<const std::uint8_t> code, std::int64_t offset) const;

  // The instruction `op` at `offset`, names filled in.
  model::Instruction instruction(std::int64_t offset, std::uint8_t op) const;

 private:
  struct Op {
    std::string_view name;
    std::uint8_t base = 0;
    std::uint8_t caches = 0;
  };
  std::array<Op, 256> ops_{};
  int extended_arg_ = -1;
  std::string_view measured_on_;
};

}  // namespace dapprof::sampler::python
