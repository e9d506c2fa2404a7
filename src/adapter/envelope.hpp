#pragma once
// Minimal DAP envelopes for the messages dapprof itself sends. Kept in one small file so that the
// protocol component's typed helpers can replace it without touching session logic.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/json.hpp"

namespace dapprof::adapter {

using protocol::Json;

// Safe field access: peers may send anything, a wrong type must not throw.
std::string_view string_field(const Json& message, const char* key);
std::optional<std::int64_t> integer_field(const Json& message, const char* key);
// The "arguments" / "body" object of a message, or an empty object.
const Json& object_field(const Json& message, const char* key);

// seq is left 0: the session numbers every message it sends to the client.
Json make_response(const Json& request, Json body);
Json make_error_response(const Json& request, std::string message, int id = 1);
Json make_event(std::string_view event, Json body);

}  // namespace dapprof::adapter
