#include "model/instruction_specialized.hpp"

#include <string_view>

namespace dapprof::model {

bool specialized(const Instruction& instruction) {
  const std::string_view name = instruction.name;
  if (name.empty() || instruction.opcode == instruction.base_opcode) return false;
  return !name.ends_with("_ADAPTIVE") && !name.starts_with("INSTRUMENTED_");
}

}  // namespace dapprof::model
