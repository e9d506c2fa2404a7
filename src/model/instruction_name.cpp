#include "model/instruction_name.hpp"

namespace dapprof::model {

std::string instruction_name(const Instruction& instruction) {
  if (instruction.name.empty()) return "<opcode " + std::to_string(instruction.opcode) + ">";
  return std::string(instruction.name);
}

}  // namespace dapprof::model
