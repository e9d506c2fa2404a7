#include "sampler/python/locals.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "sampler/python/value_text.hpp"

namespace dapprof::sampler::python {
namespace {

constexpr std::size_t kMaxLocals = 1 << 16;  // CPython's own limit is far lower in practice
constexpr std::size_t kMaxTypeName = 128;
constexpr std::size_t kMaxIntDigits = 1 << 16;  // read in full up to this (256 KB)
// co_localspluskinds (3.11+)
constexpr std::uint8_t kFastHidden = 0x10;  // a comprehension's inlined variable (3.12+)
constexpr std::uint8_t kFastCell = 0x40;
constexpr std::uint8_t kFastFree = 0x80;
constexpr int kVarargs = 0x4;  // co_flags
constexpr int kVarkeywords = 0x8;
// 3.14+ fast locals are _PyStackRef: an object pointer under its tag bits (kStackRefTagBits),
// or a small int tagged with both low bits.
constexpr Address kStackRefIntTag = 3;

}  // namespace

Result<std::vector<Address>> LocalsReader::tuple_items(Address tuple) const {
  const Layout& l = objects_.layout();
  if (!plausible(tuple)) return torn("implausible tuple address");
  std::int64_t size = 0;
  if (auto s = objects_.memory().read(tuple + l.tuple_size, &size, sizeof size); !s)
    return as_torn(s.error());
  if (size < 0 || static_cast<std::uint64_t>(size) > kMaxLocals) return torn("absurd tuple size");
  std::vector<Address> items(static_cast<std::size_t>(size));
  if (!items.empty()) {
    if (auto s = objects_.memory().read(tuple + l.tuple_items, items.data(),
                                        items.size() * sizeof(Address));
        !s)
      return as_torn(s.error());
  }
  return items;
}

Result<std::vector<LocalsReader::Slot>> LocalsReader::slots(Address code,
                                                            std::size_t& arguments) const {
  const Layout& l = objects_.layout();
  std::vector<std::byte> header(l.code_size);
  if (auto s = objects_.memory().read(code, header.data(), header.size()); !s)
    return as_torn(s.error());
  const int flags = load<int>(header, l.code_flags);
  // Each count alone is an int; a torn pair's sum may not be.
  const auto count = [&](std::uint64_t offset) {
    return static_cast<std::size_t>(std::max(0, load<int>(header, offset)));
  };
  arguments = count(l.code_argcount) + count(l.code_kwonlyargcount) + ((flags & kVarargs) ? 1 : 0) +
              ((flags & kVarkeywords) ? 1 : 0);
  std::vector<Slot> slots;
  const auto add_names = [&](Address tuple, std::size_t limit, bool cell) -> Status {
    auto items = tuple_items(tuple);
    if (!items) return items.error();
    for (std::size_t i = 0; i < std::min(limit, items->size()); ++i) {
      auto name = objects_.str((*items)[i]);
      if (!name) return name.error();
      slots.push_back({slots.size(), std::move(*name), cell});
    }
    return Ok{};
  };
  if (!l.at_least(3, 11)) {
    // f_localsplus: the locals (co_nlocals of them, named by co_varnames), then a cell per
    // co_cellvars and per co_freevars.
    const auto nlocals = static_cast<std::size_t>(std::max(0, load<int>(header, l.code_nlocals)));
    if (auto s = add_names(load<Address>(header, l.code_varnames), nlocals, false); !s)
      return s.error();
    for (const auto offset : {l.code_cellvars, l.code_freevars}) {
      if (auto s = add_names(load<Address>(header, offset), kMaxLocals, true); !s) return s.error();
    }
    return slots;
  }
  auto names = tuple_items(load<Address>(header, l.code_localsplusnames));
  if (!names) return names.error();
  std::size_t length = 0;
  auto kinds = objects_.bytes(load<Address>(header, l.code_localspluskinds), kMaxLocals, &length);
  if (!kinds) return kinds.error();
  if (kinds->size() != names->size()) return torn("co_localspluskinds does not match the names");
  for (std::size_t i = 0; i < names->size(); ++i) {
    const std::uint8_t kind = (*kinds)[i];
    if (kind & kFastHidden) continue;
    auto name = objects_.str((*names)[i]);
    if (!name) return name.error();
    slots.push_back({i, std::move(*name), (kind & (kFastCell | kFastFree)) != 0});
  }
  return slots;
}

Result<std::vector<model::LocalVariable>> LocalsReader::read(Address frame, Address code) const {
  const Layout& l = objects_.layout();
  std::size_t arguments = 0;
  auto all = slots(code, arguments);
  if (!all) return all.error();
  std::vector<model::LocalVariable> out;
  if (all->empty()) return out;
  std::vector<Address> values(all->back().index + 1);
  if (auto s = objects_.memory().read(frame + l.frame_localsplus, values.data(),
                                      values.size() * sizeof(Address));
      !s)
    return as_torn(s.error());
  const bool stack_refs = l.at_least(3, 14);
  for (const auto& slot : *all) {
    Address value = values[slot.index];
    model::LocalVariable var{slot.name, {}, slot.index < arguments};
    if (stack_refs && (value & kStackRefIntTag) == kStackRefIntTag) {
      var.value = fmt::format("{}", static_cast<std::int64_t>(value) >> 2);
      out.push_back(std::move(var));
      continue;
    }
    if (stack_refs) value &= ~kStackRefTagBits;
    if (value == 0) continue;  // not bound (yet, or any more)
    if (slot.cell) {
      // Until its MAKE_CELL runs (3.11+), a cell variable's slot holds the plain value.
      auto type = objects_.type_of(value);
      auto name = type ? type_name(*type) : Result<std::string>(type.error());
      if (name && *name == "cell") {
        if (auto s = objects_.memory().read(value + l.cell_ref, &value, sizeof value); !s)
          return as_torn(s.error());
        if (value == 0) continue;  // an empty cell: not bound
      }
    }
    var.value = describe(value);
    out.push_back(std::move(var));
  }
  return out;
}

Result<std::string> LocalsReader::type_name(Address type) const {
  if (auto it = type_names_.find(type); it != type_names_.end()) return it->second;
  auto name = objects_.type_name(type, kMaxTypeName);
  if (!name) return name.error();
  type_names_.emplace(type, *name);
  return name;
}

std::string LocalsReader::describe_int(Address object, bool as_bool) const {
  const Layout& l = objects_.layout();
  std::int64_t size_or_tag = 0;
  if (!objects_.memory().read(object + l.long_size, &size_or_tag, sizeof size_or_tag))
    return "<unreadable int>";
  std::uint64_t ndigits;
  bool negative;
  if (l.at_least(3, 12)) {
    // lv_tag: the digit count above three bits of sign (0 positive, 1 zero, 2 negative).
    const auto tag = static_cast<std::uint64_t>(size_or_tag);
    ndigits = tag >> 3;
    negative = (tag & 3) == 2;
    if ((tag & 3) == 1) ndigits = 0;
  } else {
    negative = size_or_tag < 0;
    // Negated unsigned: a torn ob_size of INT64_MIN has no signed negation.
    ndigits = negative ? 0 - static_cast<std::uint64_t>(size_or_tag)
                       : static_cast<std::uint64_t>(size_or_tag);
  }
  if (as_bool) return ndigits == 0 ? "False" : "True";
  if (ndigits > kMaxIntDigits) return fmt::format("<int of {} 30-bit digits>", ndigits);
  std::vector<std::uint32_t> digits(ndigits);
  if (!digits.empty() && !objects_.memory().read(object + l.long_digit, digits.data(),
                                                 digits.size() * sizeof(std::uint32_t)))
    return "<unreadable int>";
  return int_text(digits, negative);
}

std::string LocalsReader::describe(Address object) const {
  const Layout& l = objects_.layout();
  if (!plausible(object)) return fmt::format("<invalid object at {:#x}>", object);
  auto type = objects_.type_of(object);
  if (!type) return fmt::format("<unreadable object at {:#x}>", object);
  auto name = type_name(*type);
  if (!name) return fmt::format("<object of unreadable type at {:#x}>", object);
  const std::string& t = *name;
  if (t == "NoneType") return "None";
  if (t == "bool" || t == "int") return describe_int(object, t == "bool");
  if (t == "float") {
    double v = 0;
    if (!objects_.memory().read(object + l.float_value, &v, sizeof v)) return "<unreadable float>";
    return float_text(v);
  }
  if (t == "str") {
    std::size_t length = 0;
    auto s = objects_.str(object, kShownChars, &length);
    return s ? quoted_str(*s, length) : "<unreadable str>";
  }
  if (t == "bytes") {
    std::size_t length = 0;
    auto b = objects_.bytes(object, kShownChars, &length);
    return b ? quoted_bytes(*b, length) : "<unreadable bytes>";
  }
  if (t == "list" || t == "tuple" || t == "dict") {
    const auto offset = t == "list" ? l.list_size : t == "tuple" ? l.tuple_size : l.dict_used;
    std::int64_t n = 0;
    if (!objects_.memory().read(object + offset, &n, sizeof n) || n < 0)
      return fmt::format("<unreadable {}>", t);
    return fmt::format("<{} len={}>", t, n);
  }
  return fmt::format("<{} at {:#x}>", t, object);
}

}  // namespace dapprof::sampler::python
