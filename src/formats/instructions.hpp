#pragma once
// The bytecode instructions of a profile's frames (record --opcodes) as the formats show them.
// Only speedscope, gecko and pprof have a place for them; for the other formats frames that
// differ only in their instruction are one frame, as without --opcodes.
#include <string>

#include "formats/profile.hpp"
#include "model/frame.hpp"
#include "model/instruction_name.hpp"
#include "model/profile_format.hpp"

namespace dapprof::formats {

bool shows_instructions(model::ProfileFormat format, const WriteOptions& options);
// Whether any frame of the profile carries an instruction.
bool has_instructions(const Profile& profile);
// The profile with every frame's instruction dropped; frames that become equal merge.
Profile without_instructions(const Profile& profile);
using model::instruction_name;
// "BINARY_OP_MULTIPLY_INT @24", or "<opcode 250> @24" for one the table does not name.
std::string instruction_label(const model::Instruction& instruction);

}  // namespace dapprof::formats
