#include "sampler/python/coroutine_chains.hpp"

#include <algorithm>
#include <optional>
#include <span>

#include "sampler/python/chain_levels.hpp"

namespace dapprof::sampler::python {
namespace {

using Chunk = process::ProcessMemory::Chunk;

// On 3.14 the awaited object is the top of a suspended coroutine's value stack; 3.15 keeps one
// more item above it (_PyFrame_StackPeek(frame, 2), as CPython's own reader takes it).
std::uint64_t await_depth(const Layout& l) { return l.at_least(3, 15) ? 2 : 1; }

struct Chain {
  Address next = 0;  // the coroutine to read at the next level; 0 once the chain has ended
  Address type = 0;  // the outermost coroutine's type
  std::vector<model::Frame> outer_first;
  std::optional<Error> error;
  // Scratch of the level in progress.
  Address code = 0, instr = 0, stackpointer = 0, awaited = 0;
  std::uint8_t state = 0;
  CoroutineChains::Tip tip;
};

}  // namespace

std::vector<Result<std::vector<model::Frame>>> CoroutineChains::read(
    const std::vector<Address>& coros, std::size_t max_length, bool& truncated,
    std::vector<Tip>* tips) {
  const Layout& l = objects_.layout();
  const std::size_t gen_len = std::max(l.gen_size, l.gen_iframe + l.frame_size);
  std::vector<Chain> chains(coros.size());
  for (std::size_t i = 0; i < coros.size(); ++i) chains[i].next = coros[i];
  std::vector<std::byte> bytes;
  std::vector<Chunk> chunks;
  std::vector<char> failed;
  read_levels(chains, max_length, truncated, [&](const std::vector<std::size_t>& active) {
    // The coroutine objects, each with the frame embedded in it.
    bytes.resize(active.size() * gen_len);
    chunks.clear();
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
      c.state = load<std::uint8_t>(gen, l.gen_frame_state);
      if ((c.type != 0 && type != c.type) || c.state == l.gen_state_cleared) {
        c.next = 0;  // awaiting something else than a coroutine of its kind: the chain ends
        continue;
      }
      c.type = type;
      c.code = load<Address>(gen, l.gen_iframe + l.frame_code) & ~kStackRefTagBits;
      c.instr = load<Address>(gen, l.gen_iframe + l.frame_instr);
      c.stackpointer = load<Address>(gen, l.gen_iframe + l.frame_stackpointer);
      if (!plausible(c.code)) {
        c.error = torn("implausible code object address");
        continue;
      }
      framed.push_back(active[k]);
    }
    // The code objects those frames run (their headers; names come from the cache).
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
      auto frame = walker_.suspended_frame(
          c.code, c.instr, std::span<const std::byte>(bytes.data() + k * l.code_size, l.code_size));
      if (!frame) {
        c.error = frame.error();
        continue;
      }
      c.outer_first.push_back(std::move(*frame));
      c.tip = {c.next, c.instr};
      c.next = 0;
      if (c.state != l.gen_state_suspended_yield_from) continue;
      if (!plausible(c.stackpointer)) {
        c.error = torn("implausible coroutine stack pointer");
        continue;
      }
      awaiting.push_back(framed[k]);
    }
    // What each awaits.
    chunks.clear();
    for (std::size_t i : awaiting) {
      Chain& c = chains[i];
      chunks.push_back({c.stackpointer - 8 * await_depth(l), &c.awaited, sizeof(Address)});
    }
    objects_.memory().read_each(chunks, failed);
    for (std::size_t k = 0; k < awaiting.size(); ++k) {
      Chain& c = chains[awaiting[k]];
      if (failed[k]) {
        c.error = torn("coroutine value stack not readable");
        continue;
      }
      c.next = c.awaited & ~kStackRefTagBits;
    }
  });
  if (tips) {
    tips->clear();
    for (const auto& c : chains) tips->push_back(c.error ? Tip{} : c.tip);
  }
  return chain_frames(chains);
}

}  // namespace dapprof::sampler::python
