#include "sampler/python/instrumented.hpp"

#include <algorithm>
#include <array>
#include <cstring>

namespace dapprof::sampler::python {
namespace {

// An entry of the 3.12-3.13.2 `lines` array: the replaced opcode, then the line's delta.
constexpr std::uint8_t kUnsizedLineEntry = 2;
// 3.13.3+ size `lines` entries to the code's line span: the opcode, then 1-4 bytes of delta.
constexpr std::uint8_t kMinLineEntry = 2;
constexpr std::uint8_t kMaxLineEntry = 5;

}  // namespace

Instrumentation::Instrumentation(const Objects& objects, const OpcodeSet& set)
    : objects_(objects), set_(set) {
  const Layout& l = objects.layout();
  line_ = set.opcode("INSTRUMENTED_LINE");
  instruction_ = set.opcode("INSTRUMENTED_INSTRUCTION");
  cache_ = set.opcode("CACHE");
  readable_ = line_ >= 0 && instruction_ >= 0 && l.code_monitoring != kAbsent &&
              l.monitoring_lines != kAbsent && l.monitoring_per_instruction_opcodes != kAbsent;
}

int Instrumentation::checked(int original) const {
  if (original < 0 || original > 255) return -1;
  const auto op = static_cast<std::uint8_t>(original);
  if (!set_.known(op) || hides(op) || original == cache_) return -1;
  return original;
}

bool Instrumentation::locate(const CodeInfo& info, Address data) const {
  if (!readable_ || !plausible(data)) return false;
  const Layout& l = objects_.layout();
  // The two pointers, a few words apart in the monitoring data: one read.
  const std::uint64_t first = std::min(l.monitoring_lines, l.monitoring_per_instruction_opcodes);
  const std::uint64_t end =
      std::max(l.monitoring_lines, l.monitoring_per_instruction_opcodes) + sizeof(Address);
  std::array<std::byte, 64> words{};
  if (end - first > words.size()) return false;
  if (!objects_.memory().read(data + first, words.data(), end - first)) return false;
  Address lines = 0;
  CodeInfo::Monitoring m;
  m.data = data;
  std::memcpy(&lines, words.data() + (l.monitoring_lines - first), sizeof lines);
  std::memcpy(&m.per_instruction, words.data() + (l.monitoring_per_instruction_opcodes - first),
              sizeof m.per_instruction);
  if (lines != 0) {
    if (l.monitoring_lines_sized) {
      std::uint8_t size = 0;
      if (!objects_.memory().read(lines, &size, 1)) return false;
      if (size < kMinLineEntry || size > kMaxLineEntry) return false;
      m.lines = lines + 1;
      m.line_entry = size;
    } else {
      m.lines = lines;
      m.line_entry = kUnsizedLineEntry;
    }
  }
  info.monitoring = m;
  return true;
}

void Instrumentation::originals(std::span<Hidden> hidden) {
  if (!readable_ || hidden.empty()) return;
  line_bytes_.assign(hidden.size(), 0);
  instruction_bytes_.assign(hidden.size(), 0);
  chunks_.clear();
  // Which chunk reads what of each, -1 for nothing.
  line_chunk_.assign(hidden.size(), -1);
  instruction_chunk_.assign(hidden.size(), -1);
  for (std::size_t i = 0; i < hidden.size(); ++i) {
    const Hidden& h = hidden[i];
    const CodeInfo::Monitoring& m = h.info->monitoring;
    // An array is allocated the first time a tool needs it, and lives as long as its code object.
    const bool stale = m.data != h.data || (h.op == line_ && m.lines == 0) ||
                       (h.op == instruction_ && m.per_instruction == 0);
    if (stale && !locate(*h.info, h.data)) continue;
    if (h.unit < 0 || (h.info->code_units >= 0 && h.unit >= h.info->code_units)) continue;
    const auto unit = static_cast<Address>(h.unit);
    if (h.op == line_ && m.lines != 0) {
      line_chunk_[i] = static_cast<int>(chunks_.size());
      chunks_.push_back({m.lines + unit * m.line_entry, &line_bytes_[i], 1});
    }
    // A line's instruction may itself be INSTRUMENTED_INSTRUCTION: read its entry too.
    if (m.per_instruction != 0) {
      instruction_chunk_[i] = static_cast<int>(chunks_.size());
      chunks_.push_back({m.per_instruction + unit, &instruction_bytes_[i], 1});
    }
  }
  if (chunks_.empty()) return;
  objects_.memory().read_each(chunks_, failed_);
  const auto read = [&](int chunk) {
    return chunk >= 0 && !failed_[static_cast<std::size_t>(chunk)];
  };
  for (std::size_t i = 0; i < hidden.size(); ++i) {
    Hidden& h = hidden[i];
    int op = h.op;
    if (op == line_) op = read(line_chunk_[i]) ? line_bytes_[i] : -1;
    if (op == instruction_) {
      // Per-instruction events began after the data was located: look again next time.
      if (h.info->monitoring.per_instruction == 0) h.info->monitoring.data = 0;
      op = read(instruction_chunk_[i]) ? instruction_bytes_[i] : -1;
    }
    if (const int original = checked(op); original >= 0) h.op = static_cast<std::uint8_t>(original);
  }
}

bool Instrumentation::restore(std::vector<std::uint8_t>& bytecode, const CodeInfo& info,
                              Address data) {
  if (!readable_) return true;
  std::vector<std::uint8_t> lines;
  std::vector<std::uint8_t> per_instruction;
  bool located = false;
  const std::size_t units = bytecode.size() / 2;
  // Only where instructions start: a cache entry's bytes may look like any opcode.
  for (std::size_t at = 0; at + 1 < bytecode.size();) {
    int op = bytecode[at];
    if (hides(static_cast<std::uint8_t>(op))) {
      if (!located) {
        if (!locate(info, data)) return false;
        const CodeInfo::Monitoring& m = info.monitoring;
        if (m.lines != 0) {
          lines.resize(units * m.line_entry);
          if (!objects_.memory().read(m.lines, lines.data(), lines.size())) return false;
        }
        if (m.per_instruction != 0) {
          per_instruction.resize(units);
          if (!objects_.memory().read(m.per_instruction, per_instruction.data(), units))
            return false;
        }
        located = true;
      }
      const std::size_t unit = at / 2;
      if (op == line_) op = lines.empty() ? -1 : lines[unit * info.monitoring.line_entry];
      if (op == instruction_) op = per_instruction.empty() ? -1 : per_instruction[unit];
      op = checked(op);
      if (op < 0) return false;
      bytecode[at] = static_cast<std::uint8_t>(op);
    }
    at += 2 + 2 * std::size_t{set_.caches(bytecode[at])};
  }
  return true;
}

}  // namespace dapprof::sampler::python
