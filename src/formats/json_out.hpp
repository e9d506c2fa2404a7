#pragma once
// JSON documents written by the formats: key order kept, invalid UTF-8 replaced rather than
// throwing (names come from another process's memory).
#include <nlohmann/json.hpp>
#include <ostream>

namespace dapprof::formats {

using Json = nlohmann::ordered_json;

inline void dump_json(const Json& doc, std::ostream& out) {
  out << doc.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace dapprof::formats
