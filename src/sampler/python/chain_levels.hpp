#pragma once
// The level loop of both coroutine chain readers (coroutine_chains for 3.14+, legacy_coroutine_
// chains for 3.8-3.13): every chain still going is read a level at a time, each level in a few
// batched reads of its own, so that a walk of many tasks costs a few system calls per level
// rather than a few per coroutine. A Chain has `next` (the coroutine to read next, 0 once ended),
// `error` (an optional Error, set once it read as nonsense) and `outer_first` (its frames).
#include <algorithm>
#include <cstddef>
#include <vector>

#include "common/result.hpp"
#include "model/frame.hpp"
#include "sampler/python/objects.hpp"

namespace dapprof::sampler::python {

// Calls read_level(active), with the indices of the chains still going, until none is or
// `max_length` levels were read (which sets `truncated`).
template <typename Chain, typename ReadLevel>
void read_levels(std::vector<Chain>& chains, std::size_t max_length, bool& truncated,
                 ReadLevel&& read_level) {
  std::vector<std::size_t> active;
  for (std::size_t level = 0;; ++level) {
    active.clear();
    for (std::size_t i = 0; i < chains.size(); ++i) {
      Chain& c = chains[i];
      if (c.error || c.next == 0) continue;
      if (!plausible(c.next)) {
        c.error = torn("implausible coroutine address");
        continue;
      }
      active.push_back(i);
    }
    if (active.empty()) return;
    if (level == max_length) {
      truncated = true;
      return;
    }
    read_level(active);
  }
}

// Each chain's frames, innermost first, or its error.
template <typename Chain>
std::vector<Result<std::vector<model::Frame>>> chain_frames(std::vector<Chain>& chains) {
  std::vector<Result<std::vector<model::Frame>>> out;
  out.reserve(chains.size());
  for (auto& c : chains) {
    if (c.error) {
      out.emplace_back(*c.error);
      continue;
    }
    std::reverse(c.outer_first.begin(), c.outer_first.end());
    out.emplace_back(std::move(c.outer_first));
  }
  return out;
}

}  // namespace dapprof::sampler::python
