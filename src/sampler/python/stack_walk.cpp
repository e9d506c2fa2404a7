#include "sampler/python/stack_walk.hpp"

#include <algorithm>
#include <utility>

namespace dapprof::sampler::python {
namespace {

constexpr std::uint8_t kOwnedByGenerator = 1;
// 3.12+: the frame an evaluation call pushes at its start, which marks the C-stack boundary: 3 on
// every version, named FRAME_OWNED_BY_CSTACK on 3.12-3.13 and FRAME_OWNED_BY_INTERPRETER on 3.14+
// (where CSTACK became 4 and is assigned nowhere). CPython's own readers test owner >= 3.
constexpr std::uint8_t kFirstShimOwner = 3;
// 3.11's _PyInterpreterFrame has `bool is_entry` right before `char owner`.
constexpr std::uint64_t kIsEntryBeforeOwner = 1;
// A code object's bytecode larger than this is taken as a torn size, and gets no instructions.
constexpr std::int64_t kMaxBytecode = 1 << 22;
// How far past a code object's header its read runs on to take the code units of its frames'
// instructions with it (record --opcodes): most functions' bytecode is shorter.
constexpr std::uint64_t kUnitsWithHeader = 4096;

}  // namespace

Status StackWalker::chain(Address top_frame) {
  const Layout& l = objects_.layout();
  const bool new_frames = l.at_least(3, 11);
  // Kept from walk to walk: a sample allocates nothing for its frames once the stacks it sees
  // have been seen.
  std::vector<RawFrame>& frames = raw_;
  frames.clear();
  std::vector<std::byte>& buf = frame_buf_;
  buf.resize(frame_reader_.size());
  last_top_code_ = 0;
  const FrameReader::Walk reads = frame_reader_.begin();
  for (Address f = top_frame; f != 0;) {
    if (frames.size() >= kMaxFrames) {
      if (nonblocking_) return torn("frame chain longer than the walk bound (cycle?)");
      break;
    }
    if (!plausible(f)) return torn("implausible frame address");
    auto got = frame_reader_.read(f, buf.data());
    if (!got) return as_torn(got.error());
    const std::byte* const bytes = *got;
    RawFrame rf;
    rf.address = f;
    rf.code = load_at<Address>(bytes, l.frame_code);
    if (frames.empty()) last_top_code_ = rf.code;
    if (l.at_least(3, 14)) rf.code &= ~kStackRefTagBits;
    if (new_frames) {
      rf.instr = load_at<Address>(bytes, l.frame_instr);
      rf.owner = load_at<std::uint8_t>(bytes, l.frame_owner);
      if (l.at_least(3, 12)) {
        rf.shim = rf.owner >= kFirstShimOwner;
      } else {
        rf.ends_call = load_at<std::uint8_t>(bytes, l.frame_owner - kIsEntryBeforeOwner) != 0;
      }
    } else {
      rf.lasti = load_at<int>(bytes, l.frame_lasti);
      rf.ends_call = true;
    }
    const Address previous = load_at<Address>(bytes, l.frame_previous);
    if (previous == f) return torn("frame is its own caller");
    frames.push_back(rf);
    f = previous;
  }
  return Ok{};
}

void StackWalker::add_checks(std::vector<process::ProcessMemory::Chunk>& where,
                             std::vector<Address>& expected, std::size_t callers) const {
  if (raw_.empty()) return;
  const Layout& l = objects_.layout();
  where.push_back({raw_.front().address + l.frame_code, nullptr, sizeof(Address)});
  expected.push_back(last_top_code_);
  const bool new_frames = l.at_least(3, 11);
  for (std::size_t i = 1; i < raw_.size() && i <= callers; ++i) {
    const RawFrame& rf = raw_[i];
    if (rf.shim) continue;
    if (new_frames) {
      where.push_back({rf.address + l.frame_instr, nullptr, sizeof(Address)});
      expected.push_back(rf.instr);
    } else {
      // An int: read into the low half of a zeroed word.
      where.push_back({rf.address + l.frame_lasti, nullptr, sizeof(int)});
      expected.push_back(static_cast<std::uint32_t>(rf.lasti));
    }
  }
}

Result<std::vector<model::Frame>> StackWalker::walk(Address top_frame,
                                                    std::vector<std::uint32_t>* eval_groups,
                                                    std::vector<Address>* eval_entries,
                                                    std::vector<FrameAt>* where) {
  const Layout& l = objects_.layout();
  if (auto s = chain(top_frame); !s) return s.error();
  const std::vector<RawFrame>* raw = &raw_;

  // One batched read of the headers of every distinct code object on the stack (a recursion
  // repeats one code object over and over: the sorted list stays short).
  std::vector<Address>& codes = codes_seen_;
  codes.clear();
  for (const auto& rf : *raw) {
    if (rf.shim) continue;
    if (!plausible(rf.code)) return torn("implausible code object address");
    if (codes.empty() || codes.back() != rf.code) codes.push_back(rf.code);
  }
  std::sort(codes.begin(), codes.end());
  codes.erase(std::unique(codes.begin(), codes.end()), codes.end());
  const auto index_of = [&](Address code) {
    return static_cast<std::size_t>(std::lower_bound(codes.begin(), codes.end(), code) -
                                    codes.begin());
  };
  // With opcodes (3.11+), a code object's read runs on to the furthest instruction its frames are
  // at when that is near its header: the code units naming the frames' instructions then come
  // with the headers, not in a system call of their own (add_instructions).
  std::vector<std::uint64_t>& at = header_at_;
  at.assign(codes.size() + 1, l.code_size);
  if (opcodes_ && l.at_least(3, 11)) {
    const std::uint64_t most = l.code_size + kUnitsWithHeader;
    Address last = 0;
    std::size_t index = 0;
    // The bytes of the code object up to its bytecode's end, at most `most`.
    std::uint64_t whole = 0;
    for (const auto& rf : *raw) {
      if (rf.shim || rf.instr < rf.code) continue;
      if (rf.code != last) {
        index = index_of(last = rf.code);
        // As much of the bytecode as its code object known from earlier samples has: the same
        // bytes each sample, which the next sample's fetch then holds. Reaching only as far as
        // the instruction, a read grew whenever a frame moved on, past what the fetch held, and
        // took a system call of its own (0.8 more per sample at depth 3, flat out).
        const CodeInfo* known = codes_.peek(rf.code);
        whole = known && known->code_units > 0
                    ? std::min(most, l.code_code_adaptive +
                                         static_cast<std::uint64_t>(known->code_units) * 2)
                    : 0;
      }
      const std::uint64_t end = rf.instr - rf.code + 2;
      if (end <= most) at[index] = std::max({at[index], end, whole});
    }
  }
  // From sizes to where each code object's bytes start.
  std::uint64_t total = 0;
  for (auto& a : at) total += std::exchange(a, total);
  std::vector<std::byte>& headers = headers_;
  headers.resize(at.back());
  std::vector<process::ProcessMemory::Chunk>& chunks = header_chunks_;
  chunks.clear();
  for (std::size_t i = 0; i < codes.size(); ++i) {
    chunks.push_back({codes[i], headers.data() + at[i], at[i + 1] - at[i]});
  }
  if (auto s = objects_.memory().read_many(chunks); !s) return as_torn(s.error());

  // Each frame's code object and offset first, its instruction next (a batched read of the code
  // units of them all), and only then the frames, each written once: filled here and given its
  // instruction in a second pass, a deep stack's frames had left the cache in between and were
  // fetched again (--opcodes cost 9-14% more per sample at depth 1000 then, 1-4% now).
  std::vector<Placed>& placed = placed_;
  placed.clear();
  if (eval_groups) eval_groups->clear();
  if (eval_entries) eval_entries->clear();
  if (where) where->clear();
  pending_.clear();
  std::uint32_t in_call = 0;  // frames of the current evaluation call so far
  const auto end_call = [&](Address shim) {
    if (eval_groups) eval_groups->push_back(in_call);
    if (eval_entries) eval_entries->push_back(shim);
    in_call = 0;
  };
  const Address code_type = objects_.types().code;
  // Consecutive frames of one code object (a recursion) share its header, checked once.
  Address last_code = 0;
  const CodeInfo* last_info = nullptr;
  Address last_monitoring = 0;
  std::size_t last_index = 0;
  for (const auto& rf : *raw) {
    if (rf.shim) {
      end_call(rf.address);
      continue;
    }
    if (rf.code != last_code) {
      last_index = index_of(rf.code);
      const std::span<const std::byte> header(headers.data() + at[last_index], l.code_size);
      if (code_type && load_at<Address>(header.data(), l.object_type) != code_type) {
        return torn("frame's code is not a code object");
      }
      auto got = codes_.get(rf.code, header);
      if (!got) return got.error();
      last_code = rf.code;
      last_info = *got;
      last_monitoring =
          l.code_monitoring != kAbsent ? load_at<Address>(header.data(), l.code_monitoring) : 0;
    }
    const CodeInfo* const info = last_info;
    std::int64_t offset;
    if (l.at_least(3, 11)) {
      const Address bytecode = rf.code + l.code_code_adaptive;
      offset = static_cast<std::int64_t>(rf.instr - bytecode);
      if (!info->holds_offset(offset)) return torn("instruction pointer outside its code object");
      // Not started yet (still in the frame's prologue): CPython hides these frames too.
      // (In 64 bits: a torn _co_firsttraceable may be any int.)
      if (rf.owner != kOwnedByGenerator && offset < std::int64_t{info->first_traceable} * 2) {
        if (rf.ends_call) end_call(0);
        continue;
      }
    } else {
      offset = l.at_least(3, 10) ? rf.lasti * 2 : rf.lasti;  // 3.10 counts code units
    }
    // A recursion's frames at one instruction of one code object, one after another: one pending
    // instruction for all of them.
    std::size_t pending = kNoInstruction;
    if (opcodes_) {
      if (!placed.empty() && !pending_.empty() && placed.back().pending + 1 == pending_.size() &&
          pending_.back().info == info && pending_.back().offset == offset) {
        pending = pending_.size() - 1;
      } else {
        pending = pending_.size();
        pending_.push_back({rf.code, info, offset, -1, {}, pending, last_monitoring, last_index});
      }
    }
    placed.push_back({info, offset, pending});
    if (where) where->push_back({rf.address, rf.code});
    ++in_call;
    if (rf.ends_call) end_call(0);
  }
  if (in_call > 0) end_call(0);
  if (opcodes_ && !pending_.empty()) {
    if (auto s = add_instructions(); !s) return s.error();
  }
  std::vector<model::Frame> frames;
  frames.reserve(placed.size());
  for (const Placed& p : placed) {
    model::Frame& frame = frames.emplace_back();  // in place: no temporary frame to copy
    fill(frame, *p.info, p.offset);
    if (p.pending != kNoInstruction) frame.instruction = pending_[p.pending].instruction;
  }
  return frames;
}

Status StackWalker::add_instructions() {
  const Layout& l = objects_.layout();
  const bool adaptive = l.at_least(3, 11);
  units_.assign(pending_.size(), 0);
  unit_chunks_.clear();
  // A recursion's frames sit at the same instruction of the same code object: their code unit is
  // read once, into the unit of the first of them.
  Address last_unit = 0;
  std::size_t last_index = 0;
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    PendingInstruction& p = pending_[i];
    const CodeInfo& info = *p.info;
    if (!info.bytecode_read) {
      info.bytecode_read = true;
      if (adaptive && info.code_units > 0 && info.code_units * 2 <= kMaxBytecode) {
        info.bytecode.resize(static_cast<std::size_t>(info.code_units * 2));
        if (!objects_.memory().read(p.code + l.code_code_adaptive, info.bytecode.data(),
                                    info.bytecode.size())) {
          info.bytecode.clear();
        } else if (instrumentation_ &&
                   !instrumentation_->restore(info.bytecode, info, p.monitoring)) {
          // Instrumented, its hidden instructions unreadable: boundaries would be guesses. The
          // frame goes without an instruction this time, and the copy is read again next time.
          info.bytecode.clear();
          info.bytecode_read = false;
          continue;
        }
      } else if (!adaptive && info.code_bytes_ptr != 0) {
        auto code = objects_.bytes(info.code_bytes_ptr, kMaxBytecode);
        if (code) info.bytecode = std::move(*code);
      }
    }
    auto& slot =
        info.instructions[static_cast<std::uint64_t>(p.offset / 2) % info.instructions.size()];
    if (slot.offset != p.offset) {
      slot.offset = p.offset;
      slot.start = opcodes_->instruction_start(info.bytecode, p.offset);
      slot.positions = adaptive && slot.start >= 0
                           ? positions_for_offset(info.linetable, info.first_line, slot.start)
                           : Positions{};
    }
    p.start = slot.start;  // -1: before the first instruction, or the bytecode unreadable
    p.positions = slot.positions;
    if (p.start < 0) continue;
    if (adaptive) {
      const Address unit = p.code + l.code_code_adaptive + static_cast<Address>(slot.start);
      if (unit == last_unit) {
        p.same_unit_as = last_index;
        continue;
      }
      last_unit = unit;
      last_index = i;
      const std::uint64_t in_code = l.code_code_adaptive + static_cast<std::uint64_t>(slot.start);
      const std::uint64_t from = header_at_[p.code_index];
      if (in_code < header_at_[p.code_index + 1] - from) {
        units_[i] = static_cast<std::uint8_t>(headers_[from + in_code]);
      } else {
        unit_chunks_.push_back({unit, &units_[i], 1});
      }
    } else {
      units_[i] = info.bytecode[static_cast<std::size_t>(slot.start)];
    }
  }
  if (auto s = objects_.memory().read_many(unit_chunks_); !s) return as_torn(s.error());
  if (instrumentation_ && instrumentation_->readable()) {
    hidden_.clear();
    hidden_at_.clear();
    for (std::size_t i = 0; i < pending_.size(); ++i) {
      const PendingInstruction& p = pending_[i];
      if (p.start < 0 || p.same_unit_as != i || !instrumentation_->hides(units_[i])) continue;
      hidden_.push_back({p.info, p.monitoring, p.start / 2, units_[i]});
      hidden_at_.push_back(i);
    }
    instrumentation_->originals(hidden_);
    for (std::size_t h = 0; h < hidden_.size(); ++h) units_[hidden_at_[h]] = hidden_[h].op;
  }
  for (PendingInstruction& p : pending_) {
    if (p.start < 0) continue;
    model::Instruction& instruction =
        p.instruction.emplace(opcodes_->instruction(p.start, units_[p.same_unit_as]));
    instruction.line = p.positions.line;
    instruction.end_line = p.positions.end_line;
    instruction.column = p.positions.column;
    instruction.end_column = p.positions.end_column;
  }
  return Ok{};
}

model::Frame StackWalker::frame_of(const CodeInfo& info, std::int64_t offset) const {
  model::Frame frame;
  fill(frame, info, offset);
  return frame;
}

void StackWalker::fill(model::Frame& frame, const CodeInfo& info, std::int64_t offset) const {
  frame.function = info.function;
  frame.file = info.file;
  frame.line = lines_ == LineNumbers::Current         ? info.line_at(codes_.format(), offset)
               : lines_ == LineNumbers::FunctionStart ? info.first_line
                                                      : 0;
  frame.first_line = info.first_line;
}

Result<const CodeInfo*> StackWalker::suspended_code(Address code,
                                                    std::span<const std::byte> header) {
  const Layout& l = objects_.layout();
  if (header.size() < l.code_size) return torn("short code object header");
  const Address code_type = objects_.types().code;
  if (code_type && load_at<Address>(header.data(), l.object_type) != code_type) {
    return torn("frame's code is not a code object");
  }
  return codes_.get(code, header);
}

Result<model::Frame> StackWalker::suspended_frame(Address code, Address instr,
                                                  std::span<const std::byte> header) {
  const Layout& l = objects_.layout();
  if (!l.at_least(3, 11)) return Error{"suspended_frame needs CPython 3.11+", ErrorCode::Generic};
  code &= ~kStackRefTagBits;
  auto info = suspended_code(code, header);
  if (!info) return info.error();
  const auto offset = static_cast<std::int64_t>(instr - (code + l.code_code_adaptive));
  if (!(*info)->holds_offset(offset)) return torn("instruction pointer outside its code object");
  return frame_of(**info, offset);
}

Result<model::Frame> StackWalker::suspended_frame_at_lasti(Address code, std::int64_t lasti,
                                                           std::span<const std::byte> header) {
  const Layout& l = objects_.layout();
  if (l.at_least(3, 11))
    return Error{"suspended_frame_at_lasti is for 3.8-3.10", ErrorCode::Generic};
  auto info = suspended_code(code, header);
  if (!info) return info.error();
  const std::int64_t offset = std::max<std::int64_t>(0, l.at_least(3, 10) ? lasti * 2 : lasti);
  if (!(*info)->holds_offset(offset)) return torn("instruction offset outside its code object");
  return frame_of(**info, offset);
}

}  // namespace dapprof::sampler::python
