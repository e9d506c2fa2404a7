#pragma once
// How an instruction's opcode is named wherever it is shown (the protocol, every format).
#include <string>

#include "model/frame.hpp"

namespace dapprof::model {

// "BINARY_OP_MULTIPLY_INT", or "<opcode 250>" for one the generated tables do not name, so that
// it still reads apart from the others.
std::string instruction_name(const Instruction& instruction);

}  // namespace dapprof::model
