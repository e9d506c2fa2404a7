#pragma once
// What a profiling run needs of its session: answering requests, sending events, and how much
// the client has not read yet (profiling data yields to DAP traffic). The session implements it;
// tests implement it to watch a run from the outside.
#include <cstddef>
#include <string_view>

#include "protocol/envelope.hpp"
#include "protocol/json.hpp"

namespace dapprof::adapter::profiling {

using protocol::Json;

class Sink {
 public:
  virtual ~Sink() = default;
  virtual void respond(const Json& request, Json body) = 0;
  virtual void respond_error(const Json& request, const protocol::ProtocolError& error) = 0;
  virtual void send_event(std::string_view event, Json body) = 0;

  virtual bool client_open() = 0;
  // Bytes dapprof has queued for the client and not yet written.
  virtual std::size_t client_queued_bytes() = 0;
  // Bytes written but still unread by the client, in the kernel's socket buffer.
  virtual std::size_t client_unsent_in_kernel() = 0;
};

}  // namespace dapprof::adapter::profiling
