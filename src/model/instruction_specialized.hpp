#pragma once
// Whether an instruction is one the adaptive interpreter (3.11+) specialised: what a client shows
// as "specialised", decided here once rather than by each client comparing opcodes.
#include "model/frame.hpp"

namespace dapprof::model {

// True for a specialised form (BINARY_OP_MULTIPLY_INT, LOAD_ATTR_MODULE, RESUME_CHECK, 3.11's
// LOAD_FAST__LOAD_FAST). False for a generic instruction, and for the two other kinds that stand
// for another (Instruction::base_opcode) without being specialised: 3.11's adaptive forms
// (LOAD_ATTR_ADAPTIVE: quickened but not yet specialised, counting down to its next attempt) and
// 3.12+'s instrumented forms (INSTRUMENTED_CALL: a sys.monitoring tool's hook). The opcode
// tables give every opcode that is not its own base one of those three kinds (tools/opcodes),
// and CPython names the second and third kinds by their suffix and prefix.
bool specialized(const Instruction& instruction);

}  // namespace dapprof::model
