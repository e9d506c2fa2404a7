#include "adapter/fields.hpp"

namespace dapprof::adapter {

std::string_view string_field(const Json& message, const char* key) {
  const auto it = message.find(key);
  if (it == message.end() || !it->is_string()) return {};
  return it->get_ref<const std::string&>();
}

std::optional<std::int64_t> integer_field(const Json& message, const char* key) {
  const auto it = message.find(key);
  if (it == message.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<std::int64_t>();
}

const Json& member(const Json& message, const char* key) {
  static const Json absent;
  if (!message.is_object()) return absent;
  const auto it = message.find(key);
  return it == message.end() ? absent : *it;
}

const Json& object_field(const Json& message, const char* key) {
  static const Json empty = Json::object();
  const auto it = message.find(key);
  if (it == message.end() || !it->is_object()) return empty;
  return *it;
}

}  // namespace dapprof::adapter
