// With opcodes, profilingData keeps one frame per line and counts the samples of each instruction
// beside it: own at the innermost Python frame, total once per sample, in events that add up to
// what was sampled, merged or dropped with their samples.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>

#include "protocol/batch.hpp"

namespace dapprof::protocol {
namespace {

model::Frame at(std::string function, int line, std::int32_t offset, std::uint8_t opcode,
                int column = -1) {
  model::Frame f;
  f.function = std::move(function);
  f.file = "/src/app.py";
  f.line = line;
  model::Instruction in;
  in.offset = offset;
  in.opcode = in.base_opcode = opcode;
  in.name = in.base_name = "OP";
  in.line = in.end_line = line;
  in.column = column;
  in.end_column = column >= 0 ? column + 5 : -1;
  f.instruction = in;
  return f;
}

model::ThreadStack stack(std::vector<model::Frame> innermost_first) {
  model::ThreadStack t;
  t.info.os_thread_id = 7;
  t.info.name = "MainThread";
  t.frames = std::move(innermost_first);
  return t;
}

// (frame function, offset) -> (own, total), from the events' JSON as a client reads them.
using Counts = std::map<std::pair<std::string, int>, std::pair<std::uint64_t, std::uint64_t>>;

void read(const Json& body, std::map<std::string, Json>& instructions,
          std::map<std::string, std::string>& frames, Counts& counts) {
  for (const auto& [id, f] : body["newFrames"].items()) frames[id] = f["function"];
  if (body.contains("newInstructions"))
    for (const auto& [id, in] : body["newInstructions"].items()) instructions[id] = in;
  if (!body.contains("instructionCounts")) return;
  const auto& c = body["instructionCounts"];
  ASSERT_EQ(c.size() % 3, 0u);
  for (std::size_t i = 0; i < c.size(); i += 3) {
    const auto& in = instructions.at(std::to_string(c[i].get<std::uint64_t>()));
    const auto frame = frames.at(std::to_string(in["frame"].get<std::uint64_t>()));
    auto& [own, total] = counts[{frame, in["offset"].get<int>()}];
    own += c[i + 1].get<std::uint64_t>();
    total += c[i + 2].get<std::uint64_t>();
  }
}

TEST(InstructionCounts, OneFramePerLineAndCountsPerInstruction) {
  BatchBuilder builder;
  // main (line 3, CALL at 10) -> work line 5 at two instructions, and recursion at one.
  ASSERT_TRUE(builder.add(stack({at("work", 5, 20, 1, 4), at("main", 3, 10, 2)})));
  ASSERT_TRUE(builder.add(stack({at("work", 5, 24, 3, 9), at("main", 3, 10, 2)})));
  ASSERT_TRUE(builder.add(stack({at("work", 5, 20, 1, 4), at("main", 3, 10, 2)})));
  const Json first = to_json(builder.take(10));
  // The recursion: work at line 5 offset 20 twice on one stack.
  ASSERT_TRUE(builder.add(stack({at("work", 5, 20, 1, 4), at("work", 5, 20, 1, 4)})));
  const Json second = to_json(builder.take(10));

  EXPECT_EQ(first["newFrames"].size(), 2u) << "one frame per line, whatever its instruction";
  EXPECT_EQ(first["samples"][0], first["samples"][2]);
  EXPECT_EQ(first["samples"][0], first["samples"][1]) << "stacks differing only by instruction";
  std::map<std::string, Json> instructions;
  std::map<std::string, std::string> frames;
  Counts counts;
  read(first, instructions, frames, counts);
  read(second, instructions, frames, counts);
  EXPECT_EQ(instructions.size(), 3u);
  const auto& in = instructions.at("0");
  EXPECT_EQ(in["column"], 4);
  EXPECT_EQ(in["endColumn"], 9);
  EXPECT_EQ(in["line"], 5);
  EXPECT_FALSE(in.contains("baseOpcode")) << "not specialised";
  EXPECT_EQ(in["specialized"], false);
  EXPECT_EQ((counts[{"work", 20}]), (std::pair<std::uint64_t, std::uint64_t>{3, 3}));
  EXPECT_EQ((counts[{"work", 24}]), (std::pair<std::uint64_t, std::uint64_t>{1, 1}));
  EXPECT_EQ((counts[{"main", 10}]), (std::pair<std::uint64_t, std::uint64_t>{0, 3}));
}

TEST(InstructionCounts, SpecialisedOpcodesNameTheirBase) {
  BatchBuilder builder;
  auto f = at("work", 5, 20, 1, 4);
  f.instruction->opcode = 200;
  f.instruction->name = "BINARY_OP_MULTIPLY_INT";
  f.instruction->base_name = "BINARY_OP";
  ASSERT_TRUE(builder.add(stack({f})));
  const Json body = to_json(builder.take(10));
  EXPECT_EQ(body["newInstructions"]["0"]["opcode"], "BINARY_OP_MULTIPLY_INT");
  EXPECT_EQ(body["newInstructions"]["0"]["baseOpcode"], "BINARY_OP");
  EXPECT_EQ(body["newInstructions"]["0"]["specialized"], true);
}

// 3.11's adaptive forms and 3.12+'s instrumented ones stand for their base as a specialised form
// does, but are not specialised: the daemon says so, so that no client counts them as such.
TEST(InstructionCounts, AdaptiveAndInstrumentedFormsAreNotSpecialised) {
  struct Case {
    std::uint8_t opcode, base;
    const char *name, *base_name;
    bool specialized;
  };
  // Opcode numbers of CPython 3.11 and 3.12.
  for (const Case& c : {Case{58, 106, "LOAD_ATTR_ADAPTIVE", "LOAD_ATTR", false},
                        Case{241, 171, "INSTRUMENTED_CALL", "CALL", false},
                        Case{39, 106, "LOAD_ATTR_INSTANCE_VALUE", "LOAD_ATTR", true}}) {
    SCOPED_TRACE(c.name);
    BatchBuilder builder;
    auto f = at("work", 5, 20, 1, 4);
    f.instruction->opcode = c.opcode;
    f.instruction->base_opcode = c.base;
    f.instruction->name = c.name;
    f.instruction->base_name = c.base_name;
    ASSERT_TRUE(builder.add(stack({f})));
    const Json in = to_json(builder.take(10))["newInstructions"]["0"];
    EXPECT_EQ(in["baseOpcode"], c.base_name) << "what it stands for, specialised or not";
    EXPECT_EQ(in["specialized"], c.specialized);
  }
}

TEST(InstructionCounts, MergedBatchesAddUpAndDroppedSamplesAreNotCounted) {
  BatchBuilder builder;
  ASSERT_TRUE(builder.add(stack({at("work", 5, 20, 1)})));
  auto a = builder.take(10);
  ASSERT_TRUE(builder.add(stack({at("work", 5, 20, 1)})));
  ASSERT_TRUE(builder.add(stack({at("work", 5, 22, 1)})));
  auto b = builder.take(10);
  const Json merged = to_json(merge(a, b));
  EXPECT_EQ(merged["newInstructions"].size(), 2u);
  EXPECT_EQ(merged["instructionCounts"], Json::array({0, 2, 2, 1, 1, 1}));

  ASSERT_TRUE(builder.add(stack({at("work", 5, 26, 1)})));
  auto c = builder.take(10);
  drop_samples(c);
  const Json dropped = to_json(c);
  EXPECT_EQ(dropped["newInstructions"].size(), 1u) << "definitions are never dropped";
  EXPECT_FALSE(dropped.contains("instructionCounts"));
}

TEST(InstructionCounts, WithoutOpcodesNothingChanges) {
  BatchBuilder builder;
  model::Frame plain;
  plain.function = "work";
  plain.file = "/src/app.py";
  plain.line = 5;
  ASSERT_TRUE(builder.add(stack({plain})));
  const Json body = to_json(builder.take(10));
  EXPECT_FALSE(body.contains("newInstructions"));
  EXPECT_FALSE(body.contains("instructionCounts"));
}

}  // namespace
}  // namespace dapprof::protocol
