#pragma once
// ordered_json keeps the key order of forwarded messages exactly as the peer sent it.
#include <nlohmann/json.hpp>

namespace dapprof::protocol {
using Json = nlohmann::ordered_json;
}
