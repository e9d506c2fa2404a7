// What the daemon tells clients of each opcode of every generated table: specialised or not
// (model::specialized), for the instructions the sampler makes from the tables.
#include <gtest/gtest.h>

#include <string_view>

#include "model/instruction_specialized.hpp"
#include "sampler/python/opcodes.hpp"
#include "sampler/python/opcodes_generated.hpp"

namespace dapprof::sampler::python {
namespace {

TEST(OpcodeKinds, AdaptiveAndInstrumentedFormsAreNotSpecialised) {
  for (const GeneratedOpcodes& g : generated_opcodes()) {
    SCOPED_TRACE(g.measured_on);
    const OpcodeSet* set = OpcodeSet::of(g.major, g.minor);
    ASSERT_NE(set, nullptr);
    int specialised = 0, adaptive = 0, instrumented = 0;
    for (const OpcodeEntry& e : g.ops) {
      const auto op = static_cast<std::uint8_t>(e.opcode);
      const model::Instruction in = set->instruction(0, op);
      const std::string_view name = in.name;
      SCOPED_TRACE(name);
      if (name.ends_with("_ADAPTIVE")) {
        // 3.11's quickened form that has not specialised yet: it stands for its family.
        EXPECT_NE(in.base_opcode, op);
        EXPECT_FALSE(model::specialized(in));
        ++adaptive;
      } else if (name.starts_with("INSTRUMENTED_")) {
        EXPECT_FALSE(model::specialized(in));
        ++instrumented;
      } else if (in.base_opcode != op) {
        EXPECT_TRUE(model::specialized(in));
        ++specialised;
      } else {
        EXPECT_FALSE(model::specialized(in));
      }
    }
    const bool adaptive_interpreter = g.major == 3 && g.minor >= 11;
    EXPECT_EQ(specialised > 0, adaptive_interpreter);
    EXPECT_EQ(adaptive > 0, g.major == 3 && g.minor == 11);
    EXPECT_EQ(instrumented > 0, g.major == 3 && g.minor >= 12);
  }
}

}  // namespace
}  // namespace dapprof::sampler::python
