#pragma once
// The checks the generated parsers (protocol/generated/messages.cpp) make on one field of a JSON
// object, written once by hand: type, range, pattern, choices. Each failure is an error with code
// InvalidArgument that names the field in the words a user sees, e.g. "startProfiling argument
// 'rate' must be between 1 and 10000 samples per second, not 0". Absent and null fields are left
// at the value the caller initialised (the schema's default): null means "the default".
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/result.hpp"
#include "protocol/json.hpp"

namespace dapprof::protocol::fields {

// An error naming the field, or nullopt when the field is fine.
using Check = std::optional<Error>;

// A protocol name and the enumerator it stands for.
template <typename E>
using Names = std::span<const std::pair<std::string_view, E>>;

// Integers in the schemas without a maximum (counts) are read up to this.
inline constexpr std::int64_t kNoMaximum = std::numeric_limits<std::int64_t>::max();
// Bounds of numbers without a minimum or maximum.
inline constexpr double kUnbounded = std::numeric_limits<double>::infinity();

// "integer" or "number", where nlohmann says "number" for both.
std::string type_name(const Json& value);

// `value` if it is an object; null counts as an empty object when null_is_empty (a request's
// arguments). `what` names the whole object in the error: "startProfiling arguments".
Result<const Json*> object(const Json& value, std::string_view what, bool null_is_empty);

class Reader {
 public:
  // `what` prefixes field names in errors: "startProfiling argument" gives
  // "startProfiling argument 'rate' must be ...".
  Reader(const Json& object, std::string_view what) : object_(object), what_(what) {}

  // The field's value; nullptr when it is absent or null.
  const Json* find(std::string_view field) const;
  Error invalid(std::string_view field, std::string_view problem) const;

  Check required(std::string_view field) const;
  // JSON Schema's dependentRequired: `field` may only be given together with `needs`.
  Check dependent(std::string_view field, std::string_view needs, std::string_view why) const;
  // A schema's `not` of two required true booleans.
  Check not_both(std::string_view a, bool a_value, std::string_view b, bool b_value,
                 std::string_view why) const;

  Check boolean(std::string_view field, bool& out) const;
  Check number(std::string_view field, double min, double max, double& out) const;

  // Integers only, but an integral float such as 100.0 (Python's json writes those) is accepted.
  // `unit` follows the range in messages (" ms"). T is an integer type or an optional of one.
  template <typename T>
  Check integer(std::string_view field, std::int64_t min, std::int64_t max, std::string_view unit,
                T& out) const {
    std::optional<std::int64_t> value;
    if (auto error = integer64(field, min, max, unit, value)) return error;
    if (value) {
      if constexpr (requires { typename T::value_type; })
        out = static_cast<typename T::value_type>(*value);
      else
        out = static_cast<T>(*value);
    }
    return std::nullopt;
  }

  // `pattern` (ECMAScript, unanchored as in JSON Schema) may be empty; `meaning` says in words
  // what it asks for ("an absolute path"). T is std::string or std::optional<std::string>.
  template <typename T>
  Check string(std::string_view field, std::string_view pattern, std::string_view meaning,
               T& out) const {
    std::optional<std::string> value;
    if (auto error = string_value(field, pattern, meaning, value)) return error;
    if (value) out = std::move(*value);
    return std::nullopt;
  }

  template <typename E>
  Check choice(std::string_view field, Names<E> names, E& out) const {
    std::vector<std::string_view> choices;
    for (const auto& [name, value] : names) choices.push_back(name);
    std::optional<std::size_t> index;
    if (auto error = choice_index(field, choices, index)) return error;
    if (index) out = names[*index].second;
    return std::nullopt;
  }

  // An array of objects, each read by T::parse.
  template <typename T>
  Check array(std::string_view field, std::size_t max_items, std::vector<T>& out) const {
    const Json* value = find(field);
    if (!value) return std::nullopt;
    if (auto error = array_shape(field, *value, max_items)) return error;
    std::vector<T> items;
    for (const Json& item : *value) {
      auto parsed = T::parse(item);
      if (!parsed) return item_error(field, items.size(), parsed.error());
      items.push_back(std::move(*parsed));
    }
    out = std::move(items);
    return std::nullopt;
  }

 private:
  Check integer64(std::string_view field, std::int64_t min, std::int64_t max, std::string_view unit,
                  std::optional<std::int64_t>& out) const;
  Check string_value(std::string_view field, std::string_view pattern, std::string_view meaning,
                     std::optional<std::string>& out) const;
  Check choice_index(std::string_view field, std::span<const std::string_view> choices,
                     std::optional<std::size_t>& out) const;
  Check array_shape(std::string_view field, const Json& value, std::size_t max_items) const;
  Error item_error(std::string_view field, std::size_t index, const Error& error) const;

  const Json& object_;
  std::string_view what_;
};

}  // namespace dapprof::protocol::fields
