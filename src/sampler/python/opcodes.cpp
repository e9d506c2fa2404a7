#include "sampler/python/opcodes.hpp"

#include <memory>
#include <mutex>
#include <vector>

#include "sampler/python/opcodes_generated.hpp"

namespace dapprof::sampler::python {

const OpcodeSet* OpcodeSet::of(int major, int minor) {
  // Built once per version on first use, then shared by every sampler of the process.
  static std::mutex mutex;
  static std::vector<std::unique_ptr<OpcodeSet>> built(generated_opcodes().size());
  const auto tables = generated_opcodes();
  for (std::size_t t = 0; t < tables.size(); ++t) {
    const GeneratedOpcodes& g = tables[t];
    if (g.major != major || g.minor != minor) continue;
    const std::lock_guard lock(mutex);
    if (!built[t]) {
      auto set = std::make_unique<OpcodeSet>();
      set->extended_arg_ = g.extended_arg;
      set->measured_on_ = g.measured_on;
      for (std::size_t op = 0; op < set->ops_.size(); ++op) {
        set->ops_[op].base = static_cast<std::uint8_t>(op);
      }
      for (const OpcodeEntry& e : g.ops) {
        set->ops_[static_cast<std::uint8_t>(e.opcode)] = {e.name, static_cast<std::uint8_t>(e.base),
                                                          static_cast<std::uint8_t>(e.caches)};
      }
      built[t] = std::move(set);
    }
    return built[t].get();
  }
  return nullptr;
}

std::int64_t OpcodeSet::instruction_start(std::span<const std::uint8_t> code,
                                          std::int64_t offset) const {
  const auto size = static_cast<std::int64_t>(code.size());
  if (offset < 0 || offset >= size) return -1;
  // Instruction boundaries can only be found from the start: a cache entry's bytes look like
  // any instruction's. INSTRUMENTED_LINE and INSTRUMENTED_INSTRUCTION count as having no caches:
  // the caller restores the opcodes they replaced first (Instrumentation::restore).
  std::int64_t at = 0;
  while (at < size) {
    const std::uint8_t op = code[static_cast<std::size_t>(at)];
    const std::int64_t next = at + 2 + 2 * std::int64_t{caches(op)};
    if (offset < next) return at;
    at = next;
  }
  return -1;
}

int OpcodeSet::opcode(std::string_view name) const {
  for (std::size_t op = 0; op < ops_.size(); ++op) {
    if (ops_[op].name == name) return static_cast<int>(op);
  }
  return -1;
}

model::Instruction OpcodeSet::instruction(std::int64_t offset, std::uint8_t op) const {
  model::Instruction i;
  i.offset = static_cast<std::int32_t>(offset);
  i.opcode = op;
  i.base_opcode = ops_[op].base;
  i.name = ops_[op].name;
  i.base_name = ops_[i.base_opcode].name;
  return i;
}

}  // namespace dapprof::sampler::python
