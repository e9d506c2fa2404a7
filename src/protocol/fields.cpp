#include "protocol/fields.hpp"

#include <fmt/format.h>

#include <cmath>
#include <regex>

namespace dapprof::protocol::fields {
namespace {

std::string range_text(std::int64_t min, std::int64_t max, std::string_view unit) {
  if (max == kNoMaximum) return fmt::format("at least {}{}", min, unit);
  return fmt::format("between {} and {}{}", min, max, unit);
}

// "'a', 'b' or 'c'"
std::string choices_text(std::span<const std::string_view> choices) {
  std::string text;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    if (i > 0) text += i + 1 == choices.size() ? " or " : ", ";
    text += fmt::format("'{}'", choices[i]);
  }
  return text;
}

}  // namespace

std::string type_name(const Json& value) {
  if (value.is_number_integer()) return "integer";
  if (value.is_number_float()) return "number";
  return value.type_name();
}

Result<const Json*> object(const Json& value, std::string_view what, bool null_is_empty) {
  static const Json kEmpty = Json::object();
  if (value.is_null() && null_is_empty) return &kEmpty;
  if (!value.is_object())
    return Error{fmt::format("{} must be a JSON object, not {}", what, type_name(value)),
                 ErrorCode::InvalidArgument};
  return &value;
}

const Json* Reader::find(std::string_view field) const {
  const auto it = object_.find(field);
  return it == object_.end() || it->is_null() ? nullptr : &*it;
}

Error Reader::invalid(std::string_view field, std::string_view problem) const {
  return Error{fmt::format("{} '{}' {}", what_, field, problem), ErrorCode::InvalidArgument};
}

Check Reader::required(std::string_view field) const {
  if (find(field)) return std::nullopt;
  return invalid(field, "is missing");
}

Check Reader::dependent(std::string_view field, std::string_view needs,
                        std::string_view why) const {
  if (!find(field) || find(needs)) return std::nullopt;
  return invalid(field, fmt::format("needs '{}' too{}{}", needs, why.empty() ? "" : ": ", why));
}

Check Reader::not_both(std::string_view a, bool a_value, std::string_view b, bool b_value,
                       std::string_view why) const {
  if (!a_value || !b_value) return std::nullopt;
  return Error{fmt::format("{}s '{}' and '{}' cannot both be true{}{}", what_, a, b,
                           why.empty() ? "" : ": ", why),
               ErrorCode::InvalidArgument};
}

Check Reader::boolean(std::string_view field, bool& out) const {
  const Json* value = find(field);
  if (!value) return std::nullopt;
  if (!value->is_boolean())
    return invalid(field, fmt::format("must be true or false, not {}", type_name(*value)));
  out = value->get<bool>();
  return std::nullopt;
}

Check Reader::number(std::string_view field, double min, double max, double& out) const {
  const Json* value = find(field);
  if (!value) return std::nullopt;
  if (!value->is_number())
    return invalid(field, fmt::format("must be a number, not {}", type_name(*value)));
  const double d = value->get<double>();
  if (!std::isfinite(d) || d < min || d > max) {
    if (std::isinf(max)) return invalid(field, fmt::format("must be at least {}, not {}", min, d));
    return invalid(field, fmt::format("must be between {} and {}, not {}", min, max, d));
  }
  out = d;
  return std::nullopt;
}

Check Reader::integer64(std::string_view field, std::int64_t min, std::int64_t max,
                        std::string_view unit, std::optional<std::int64_t>& out) const {
  const Json* value = find(field);
  if (!value) return std::nullopt;
  const auto range = range_text(min, max, unit);
  std::int64_t v = 0;
  if (value->is_number_unsigned()) {
    const auto u = value->get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(max))
      return invalid(field, fmt::format("must be {}, not {}", range, u));
    v = static_cast<std::int64_t>(u);
  } else if (value->is_number_integer()) {
    v = value->get<std::int64_t>();
  } else if (value->is_number_float()) {
    const double d = value->get<double>();
    if (!std::isfinite(d) || d != std::floor(d))
      return invalid(field, fmt::format("must be a whole number {}, not {}", range, d));
    // 2^63 itself is not an int64; every double below it that is in range converts exactly.
    if (d < static_cast<double>(min) || d > static_cast<double>(max) || d >= 0x1p63)
      return invalid(field, fmt::format("must be {}, not {}", range, d));
    v = static_cast<std::int64_t>(d);
  } else {
    return invalid(field, fmt::format("must be an integer {}, not {}", range, type_name(*value)));
  }
  if (v < min || v > max) return invalid(field, fmt::format("must be {}, not {}", range, v));
  out = v;
  return std::nullopt;
}

Check Reader::string_value(std::string_view field, std::string_view pattern,
                           std::string_view meaning, std::optional<std::string>& out) const {
  const Json* value = find(field);
  if (!value) return std::nullopt;
  if (!value->is_string())
    return invalid(field, fmt::format("must be a string, not {}", type_name(*value)));
  auto text = value->get<std::string>();
  // Requests are rare (a user's click), so compiling the pattern each time costs nothing.
  if (!pattern.empty() && !std::regex_search(text, std::regex(pattern.begin(), pattern.end())))
    return invalid(field, fmt::format("must be {}, not '{}'", meaning, text));
  out = std::move(text);
  return std::nullopt;
}

Check Reader::choice_index(std::string_view field, std::span<const std::string_view> choices,
                           std::optional<std::size_t>& out) const {
  const Json* value = find(field);
  if (!value) return std::nullopt;
  if (!value->is_string())
    return invalid(field,
                   fmt::format("must be {}, not {}", choices_text(choices), type_name(*value)));
  const auto name = value->get<std::string>();
  for (std::size_t i = 0; i < choices.size(); ++i) {
    if (choices[i] == name) {
      out = i;
      return std::nullopt;
    }
  }
  return invalid(field, fmt::format("must be {}, not '{}'", choices_text(choices), name));
}

Check Reader::array_shape(std::string_view field, const Json& value, std::size_t max_items) const {
  if (!value.is_array())
    return invalid(field, fmt::format("must be an array, not {}", type_name(value)));
  if (value.size() > max_items)
    return invalid(field,
                   fmt::format("must have at most {} items, not {}", max_items, value.size()));
  return std::nullopt;
}

Error Reader::item_error(std::string_view field, std::size_t index, const Error& error) const {
  return invalid(field, fmt::format("item {}: {}", index, error.message));
}

}  // namespace dapprof::protocol::fields
