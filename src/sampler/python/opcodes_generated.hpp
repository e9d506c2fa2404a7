#pragma once
// The bytecode instruction set of each CPython minor version, generated from each interpreter's
// own opcode and dis modules by tools/opcodes/generate.py (see opcodes_generated.cpp).
#include <cstdint>
#include <span>
#include <string_view>

namespace dapprof::sampler::python {

struct OpcodeEntry {
  int opcode;
  std::string_view name;  // as dis names it: "BINARY_OP_MULTIPLY_INT"
  int base;               // the opcode it deoptimises to; itself for a base opcode
  int caches;             // inline cache entries (code units) after the instruction, 3.11+
};

struct GeneratedOpcodes {
  int major;
  int minor;
  std::string_view measured_on;  // the full version whose modules produced the table
  int extended_arg;              // EXTENDED_ARG's opcode
  int cache;                     // CACHE's opcode (3.11+), -1 before
  std::span<const OpcodeEntry> ops;
};

std::span<const GeneratedOpcodes> generated_opcodes();

}  // namespace dapprof::sampler::python
