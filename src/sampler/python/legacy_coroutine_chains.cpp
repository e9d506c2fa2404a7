#include "sampler/python/legacy_coroutine_chains.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <span>

#include "sampler/python/chain_levels.hpp"

namespace dapprof::sampler::python {
namespace {

using Chunk = process::ProcessMemory::Chunk;

// A value stack deeper than this is a misread (CPython's deepest are a few hundred items).
constexpr std::int64_t kMaxStackDepth = 1 << 16;
// RESUME's oparg after a `yield from` (2) or an `await` (3); 0 and 1 start a frame or follow a
// plain `yield`.
constexpr std::uint8_t kResumeAfterAwait = 2;

bool old_frames(const Layout& l) { return !l.at_least(3, 11); }

}  // namespace

struct LegacyCoroutineChains::Chain {
  Address next = 0;  // the coroutine to read at the next level; 0 once the chain has ended
  Address type = 0;  // the outermost coroutine's type
  std::vector<model::Frame> outer_first;
  std::optional<Error> error;
  // Scratch of the level in progress.
  Address frame = 0;  // the frame object (3.8-3.10) or the embedded frame (3.11+)
  Address code = 0, instr = 0;
  std::int64_t lasti = 0;
  Address stack_top = 0;  // one past the value stack's top item if suspended in an await, else 0
  Address check_at = 0;   // the instruction that says it awaits (0: the state said so)
  std::uint8_t check[2] = {};
  Address awaited = 0;
};

Result<Address> LegacyCoroutineChains::frame_of(Address coro) const {
  const Layout& l = objects_.layout();
  if (!old_frames(l)) return coro + l.gen_iframe;
  auto frame = objects_.memory().read<Address>(coro + l.gen_frame);
  if (!frame) return as_torn(frame.error());
  return *frame;
}

std::vector<Result<std::vector<model::Frame>>> LegacyCoroutineChains::read(
    const std::vector<Address>& coros, std::size_t max_length, bool& truncated) {
  std::vector<Chain> chains(coros.size());
  for (std::size_t i = 0; i < coros.size(); ++i) chains[i].next = coros[i];
  read_levels(chains, max_length, truncated,
              [&](const std::vector<std::size_t>& active) { read_level(chains, active); });
  return chain_frames(chains);
}

void LegacyCoroutineChains::read_level(std::vector<Chain>& chains,
                                       const std::vector<std::size_t>& active) {
  const Layout& l = objects_.layout();
  const bool old = old_frames(l);
  // The coroutine objects (3.11+: each with its frame's header embedded).
  const std::size_t gen_len = old ? l.gen_size : std::max(l.gen_size, l.gen_iframe + l.frame_size);
  std::vector<std::byte> bytes(active.size() * gen_len);
  std::vector<Chunk> chunks;
  std::vector<char> failed;
  for (std::size_t k = 0; k < active.size(); ++k)
    chunks.push_back({chains[active[k]].next, bytes.data() + k * gen_len, gen_len});
  objects_.memory().read_each(chunks, failed);
  std::vector<std::size_t> framed;
  for (std::size_t k = 0; k < active.size(); ++k) {
    Chain& c = chains[active[k]];
    if (failed[k]) {
      c.error = torn("coroutine object not readable");
      continue;
    }
    const std::span<const std::byte> gen(bytes.data() + k * gen_len, gen_len);
    const auto type = load<Address>(gen, l.object_type);
    if (c.type != 0 && type != c.type) {
      c.next = 0;  // awaiting something else than a coroutine of its kind: the chain ends
      continue;
    }
    c.type = type;
    c.stack_top = c.check_at = 0;
    if (old) {
      c.frame = load<Address>(gen, l.gen_frame);
      if (c.frame == 0) {  // finished: its frame is gone
        c.next = 0;
        continue;
      }
      if (!plausible(c.frame)) {
        c.error = torn("implausible frame address");
        continue;
      }
    } else {
      const auto state = load<std::uint8_t>(gen, l.gen_frame_state);
      if (state == l.gen_state_cleared) {
        c.next = 0;
        continue;
      }
      c.frame = c.next + l.gen_iframe;
      c.code = load<Address>(gen, l.gen_iframe + l.frame_code) & ~kStackRefTagBits;
      c.instr = load<Address>(gen, l.gen_iframe + l.frame_instr);
      const auto depth = load<std::int32_t>(gen, l.gen_iframe + l.frame_stacktop_index);
      const bool resumes = l.at_least(3, 13) ? state == l.gen_state_suspended_yield_from
                                             : state == l.gen_state_suspended;
      if (resumes && depth >= 1 && depth < kMaxStackDepth) {
        c.stack_top = c.frame + l.frame_localsplus + static_cast<Address>(depth) * 8;
        // 3.11-3.12 keep no state of their own for it: the next instruction says.
        if (!l.at_least(3, 13)) c.check_at = c.instr + 2;
      }
    }
    framed.push_back(active[k]);
  }
  if (old) {
    // The frame objects.
    bytes.resize(framed.size() * l.frame_size);
    chunks.clear();
    for (std::size_t k = 0; k < framed.size(); ++k)
      chunks.push_back({chains[framed[k]].frame, bytes.data() + k * l.frame_size, l.frame_size});
    objects_.memory().read_each(chunks, failed);
    std::vector<std::size_t> read;
    for (std::size_t k = 0; k < framed.size(); ++k) {
      Chain& c = chains[framed[k]];
      if (failed[k]) {
        c.error = torn("coroutine frame not readable");
        continue;
      }
      const std::span<const std::byte> f(bytes.data() + k * l.frame_size, l.frame_size);
      c.code = load<Address>(f, l.frame_code);
      c.lasti = load<std::int32_t>(f, l.frame_lasti);
      if (!l.at_least(3, 10)) {
        c.stack_top = load<Address>(f, l.frame_stacktop);  // NULL unless suspended
      } else {
        const auto depth = load<std::int32_t>(f, l.frame_stackdepth);
        if (load<std::uint8_t>(f, l.frame_state) == l.frame_state_suspended && depth >= 1 &&
            depth < kMaxStackDepth)
          c.stack_top = load<Address>(f, l.frame_valuestack) + static_cast<Address>(depth) * 8;
      }
      if (c.lasti < 0) c.stack_top = 0;  // not started yet
      read.push_back(framed[k]);
    }
    framed = std::move(read);
  }
  // The code objects those frames run (their headers; names come from the cache).
  std::erase_if(framed, [&](std::size_t i) {
    if (plausible(chains[i].code)) return false;
    chains[i].error = torn("implausible code object address");
    return true;
  });
  bytes.resize(framed.size() * l.code_size);
  chunks.clear();
  for (std::size_t k = 0; k < framed.size(); ++k)
    chunks.push_back({chains[framed[k]].code, bytes.data() + k * l.code_size, l.code_size});
  objects_.memory().read_each(chunks, failed);
  std::vector<std::size_t> awaiting;
  for (std::size_t k = 0; k < framed.size(); ++k) {
    Chain& c = chains[framed[k]];
    if (failed[k]) {
      c.error = torn("code object not readable");
      continue;
    }
    const std::span<const std::byte> header(bytes.data() + k * l.code_size, l.code_size);
    auto frame = old ? walker_.suspended_frame_at_lasti(c.code, c.lasti, header)
                     : walker_.suspended_frame(c.code, c.instr, header);
    if (!frame) {
      c.error = frame.error();
      continue;
    }
    c.outer_first.push_back(std::move(*frame));
    c.next = 0;
    if (c.stack_top == 0) continue;
    if (old) {
      // The instruction after the last one run: YIELD_FROM while it awaits.
      Address code_bytes = 0;
      std::memcpy(&code_bytes, header.data() + l.code_code, sizeof code_bytes);
      const std::int64_t at = l.at_least(3, 10) ? c.lasti * 2 : c.lasti;
      c.check_at = code_bytes + l.bytes_sval + static_cast<Address>(at) + 2;
    }
    awaiting.push_back(framed[k]);
  }
  read_awaited(chains, awaiting);
}

void LegacyCoroutineChains::read_awaited(std::vector<Chain>& chains,
                                         const std::vector<std::size_t>& awaiting) {
  const Layout& l = objects_.layout();
  std::vector<Chunk> chunks;
  std::vector<std::pair<std::size_t, std::size_t>> at;  // each chain's chunks: [first, last]
  for (std::size_t i : awaiting) {
    Chain& c = chains[i];
    if (!plausible(c.stack_top - 8) || (c.check_at != 0 && c.check_at < 4096)) {
      c.error = torn("implausible coroutine value stack");
      at.emplace_back(0, 0);
      continue;
    }
    at.emplace_back(chunks.size(), chunks.size());
    chunks.push_back({c.stack_top - 8, &c.awaited, sizeof(Address)});
    if (c.check_at != 0) {
      at.back().second = chunks.size();
      chunks.push_back({c.check_at, c.check, sizeof c.check});
    }
  }
  std::vector<char> failed;
  objects_.memory().read_each(chunks, failed);
  for (std::size_t n = 0; n < awaiting.size(); ++n) {
    Chain& c = chains[awaiting[n]];
    if (c.error) continue;
    if (failed[at[n].first] || failed[at[n].second]) {
      c.error = torn("coroutine value stack not readable");
      continue;
    }
    bool awaits = true;
    if (c.check_at != 0 && !l.at_least(3, 11)) {
      awaits = c.check[0] == l.opcode_yield_from;
    } else if (c.check_at != 0) {
      const std::uint64_t op = c.check[0];
      awaits = (op == l.opcode_resume || op == l.opcode_resume_quick ||
                op == l.opcode_instrumented_resume) &&
               c.check[1] >= kResumeAfterAwait;
    }
    if (awaits) c.next = c.awaited & ~kStackRefTagBits;
  }
}

}  // namespace dapprof::sampler::python
