#pragma once
// Safe access to fields of messages from peers, which may send anything: a wrong type must not
// throw. (Envelopes for dapprof's own messages come from protocol/envelope.hpp.)
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
// The member as sent, whatever its type (null if absent), for parsers that name a wrong type.
const Json& member(const Json& message, const char* key);

}  // namespace dapprof::adapter
