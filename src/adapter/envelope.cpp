#include "adapter/envelope.hpp"

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

const Json& object_field(const Json& message, const char* key) {
  static const Json empty = Json::object();
  const auto it = message.find(key);
  if (it == message.end() || !it->is_object()) return empty;
  return *it;
}

namespace {
Json response_head(const Json& request, bool success) {
  Json response = Json::object();
  response["seq"] = 0;
  response["type"] = "response";
  response["request_seq"] = integer_field(request, "seq").value_or(0);
  response["success"] = success;
  response["command"] = std::string(string_field(request, "command"));
  return response;
}
}  // namespace

Json make_response(const Json& request, Json body) {
  Json response = response_head(request, true);
  response["body"] = std::move(body);
  return response;
}

Json make_error_response(const Json& request, std::string message, int id) {
  Json response = response_head(request, false);
  // DAP clients show `message`; `body.error.format` is what VS Code displays in its dialog.
  response["message"] = message;
  response["body"] = {{"error", {{"id", id}, {"format", std::move(message)}, {"showUser", true}}}};
  return response;
}

Json make_event(std::string_view event, Json body) {
  Json message = Json::object();
  message["seq"] = 0;
  message["type"] = "event";
  message["event"] = std::string(event);
  message["body"] = std::move(body);
  return message;
}

}  // namespace dapprof::adapter
