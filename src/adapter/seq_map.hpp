#pragma once
// dapprof injects its own messages toward the client, so it owns the seq numbering on that side:
// every message to the client gets the next number, and a reverse request from debugpy (e.g.
// runInTerminal) is renumbered, remembering debugpy's seq so that the client's response can be
// mapped back (its request_seq rewritten) before it goes upstream.
#include <cstdint>
#include <optional>
#include <unordered_map>

namespace dapprof::adapter {

class SeqMapper {
 public:
  // The seq for the next message sent to the client (strictly increasing from 1).
  std::int64_t next_client_seq() { return ++last_; }
  // Renumbers a reverse request whose upstream seq was upstream_seq; returns its client seq.
  std::int64_t map_reverse_request(std::int64_t upstream_seq);
  // For a client response with this request_seq: debugpy's original seq, once (then forgotten).
  std::optional<std::int64_t> take_upstream_seq(std::int64_t client_request_seq);
  std::size_t pending() const { return reverse_.size(); }

 private:
  std::int64_t last_ = 0;
  std::unordered_map<std::int64_t, std::int64_t> reverse_;  // client seq -> upstream seq
};

}  // namespace dapprof::adapter
