#include "adapter/seq_map.hpp"

namespace dapprof::adapter {

std::int64_t SeqMapper::map_reverse_request(std::int64_t upstream_seq) {
  const std::int64_t seq = next_client_seq();
  reverse_[seq] = upstream_seq;
  return seq;
}

std::optional<std::int64_t> SeqMapper::take_upstream_seq(std::int64_t client_request_seq) {
  const auto it = reverse_.find(client_request_seq);
  if (it == reverse_.end()) return std::nullopt;
  const std::int64_t original = it->second;
  reverse_.erase(it);
  return original;
}

}  // namespace dapprof::adapter
