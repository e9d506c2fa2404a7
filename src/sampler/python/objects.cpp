#include "sampler/python/objects.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include "sampler/python/unicode.hpp"

namespace dapprof::sampler::python {
namespace {

constexpr std::uint64_t kMaxDictEntries = 1 << 16;      // dicts we read are small
constexpr std::uint64_t kMaxBytes = 16 << 20;           // line tables
constexpr std::uint64_t kTpflagsManagedDict = 1 << 4;   // 3.11+
constexpr std::uint64_t kTpflagsInlineValues = 1 << 2;  // 3.13+

}  // namespace

Error as_torn(const Error& e) {
  if (e.code == ErrorCode::Generic) return Error{e.message, ErrorCode::TornRead};
  return e;
}

Result<Address> Objects::type_of(Address object) const {
  auto t = mem_.read_pointer(object + l_.object_type);
  if (!t) return as_torn(t.error());
  return *t;
}

Result<std::string> Objects::type_name(Address type, std::size_t max_len) const {
  if (!plausible(type)) return torn("implausible type address");
  auto text = mem_.read_pointer(type + l_.type_name);
  if (!text) return as_torn(text.error());
  if (*text < 4096) return torn("implausible type name");
  auto name = mem_.read_cstring_prefix(*text, max_len);
  if (!name) return as_torn(name.error());
  return name;
}

Result<std::string> Objects::str(Address object, std::size_t max_chars, std::size_t* length) const {
  if (!plausible(object)) return torn("implausible str address");
  // The header of a short ASCII string can be smaller than PyCompactUnicodeObject: read the
  // larger size first, the smaller one if that crossed into unmapped memory.
  std::vector<std::byte> header(l_.unicode_compact_size);
  if (auto s = mem_.read(object, header.data(), header.size()); !s) {
    header.resize(l_.unicode_ascii_size);
    if (auto s2 = mem_.read(object, header.data(), header.size()); !s2) return as_torn(s2.error());
    header.resize(l_.unicode_compact_size);  // zero-filled tail; valid only if ASCII
  }
  if (types_.str && load<Address>(header, l_.object_type) != types_.str) {
    return torn("expected a str object");
  }
  auto h = parse_unicode_header(header, l_);
  if (!h) return h.error();
  Address data = object + h->data_offset;
  if (h->data_is_pointer) data = load<Address>(header, h->data_offset);
  if (length) *length = h->length;
  const std::size_t count = std::min<std::size_t>(h->length, max_chars);
  std::vector<std::byte> chars(count * static_cast<unsigned>(h->kind));
  if (!chars.empty()) {
    if (auto s = mem_.read(data, chars.data(), chars.size()); !s) return as_torn(s.error());
  }
  return code_points_to_utf8(chars, h->kind, count);
}

Result<std::vector<std::uint8_t>> Objects::bytes(Address object, std::size_t max_size,
                                                 std::size_t* length) const {
  if (!plausible(object)) return torn("implausible bytes address");
  std::vector<std::byte> header(l_.bytes_sval);
  if (auto s = mem_.read(object, header.data(), header.size()); !s) return as_torn(s.error());
  if (types_.bytes && load<Address>(header, l_.object_type) != types_.bytes) {
    return torn("expected a bytes object");
  }
  const auto size = load<std::int64_t>(header, l_.bytes_size);
  if (size < 0 || static_cast<std::uint64_t>(size) > kMaxBytes) return torn("absurd bytes size");
  if (length) *length = static_cast<std::size_t>(size);
  std::vector<std::uint8_t> out(std::min(static_cast<std::size_t>(size), max_size));
  if (!out.empty()) {
    if (auto s = mem_.read(object + l_.bytes_sval, out.data(), out.size()); !s) {
      return as_torn(s.error());
    }
  }
  return out;
}

Result<std::uint64_t> Objects::unsigned_int(Address object) const {
  if (!plausible(object)) return torn("implausible int address");
  std::vector<std::byte> buf(l_.long_digit + 3 * sizeof(std::uint32_t));
  if (auto s = mem_.read(object, buf.data(), buf.size()); !s) return as_torn(s.error());
  if (types_.long_ && load<Address>(buf, l_.object_type) != types_.long_) {
    return torn("expected an int object");
  }
  const auto tag = load<std::int64_t>(buf, l_.long_size);
  std::int64_t ndigits;
  if (l_.at_least(3, 12)) {
    // lv_tag: number of digits << 3 | sign (0 positive, 1 zero, 2 negative).
    if ((tag & 3) == 2) return torn("negative int");
    ndigits = (tag & 3) == 1 ? 0 : (tag >> 3);
  } else {
    if (tag < 0) return torn("negative int");
    ndigits = tag;
  }
  if (ndigits > 3) return torn("int wider than 64 bits");
  std::uint64_t value = 0;
  for (std::int64_t i = ndigits - 1; i >= 0; --i) {
    const auto digit = load<std::uint32_t>(buf, l_.long_digit + static_cast<std::uint64_t>(i) * 4);
    value = (value << 30) | (digit & 0x3FFFFFFF);  // 30-bit digits
  }
  return value;
}

Result<std::vector<Objects::Item>> Objects::keys_items(Address keys, Address values) const {
  if (!plausible(keys) || (values && !plausible(values))) return torn("implausible dict table");
  std::vector<std::byte> header(l_.keys_indices);
  if (auto s = mem_.read(keys, header.data(), header.size()); !s) return as_torn(s.error());
  const auto nentries = load<std::int64_t>(header, l_.keys_nentries);
  if (nentries < 0 || static_cast<std::uint64_t>(nentries) > kMaxDictEntries) {
    return torn("absurd dict size");
  }
  std::uint64_t index_bytes;
  std::uint64_t entry_size = l_.keys_entry_size;
  bool has_hash = true;
  if (l_.at_least(3, 11)) {
    const auto log2_index_bytes = load<std::uint8_t>(header, l_.keys_log2_index_bytes);
    if (log2_index_bytes > 40) return torn("absurd dict index size");
    index_bytes = std::uint64_t{1} << log2_index_bytes;
    if (load<std::uint8_t>(header, l_.keys_kind) != 0) {  // unicode or split: no hash stored
      entry_size = l_.keys_unicode_entry_size;
      has_hash = false;
    }
  } else {
    const auto size = load<std::int64_t>(header, l_.keys_size);
    if (size <= 0 || size > (1 << 24)) return torn("absurd dict table size");
    const std::uint64_t width = size <= 0xff ? 1 : size <= 0xffff ? 2 : 4;
    index_bytes = static_cast<std::uint64_t>(size) * width;
  }
  const auto n = static_cast<std::uint64_t>(nentries);
  std::vector<std::byte> entries(n * entry_size);
  std::vector<Address> value_array(values ? n : 0);
  std::array<process::ProcessMemory::Chunk, 2> chunks{{
      {keys + l_.keys_indices + index_bytes, entries.data(), entries.size()},
      {values + l_.values_values, value_array.data(), value_array.size() * sizeof(Address)},
  }};
  if (auto s = mem_.read_many(std::span(chunks.data(), values ? 2 : 1)); !s) {
    return as_torn(s.error());
  }
  std::vector<Item> items;
  const std::uint64_t key_at = has_hash ? 8 : 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    Item item{load<Address>(entries, i * entry_size + key_at),
              values ? value_array[i] : load<Address>(entries, i * entry_size + key_at + 8)};
    if (item.key && item.value) items.push_back(item);
  }
  return items;
}

Result<std::vector<Objects::Item>> Objects::dict_items(Address dict) const {
  if (!plausible(dict)) return torn("implausible dict address");
  std::vector<std::byte> header(l_.dict_values + 8);
  if (auto s = mem_.read(dict, header.data(), header.size()); !s) return as_torn(s.error());
  if (types_.dict && load<Address>(header, l_.object_type) != types_.dict) {
    return torn("expected a dict object");
  }
  return keys_items(load<Address>(header, l_.dict_keys), load<Address>(header, l_.dict_values));
}

Result<Address> Objects::find_str_key(const std::vector<Item>& items, std::string_view key) const {
  for (const auto& item : items) {
    auto k = str(item.key);
    if (!k) continue;  // keys that are not str (or unreadable) cannot match
    if (*k == key) return item.value;
  }
  return Address{0};
}

Result<Address> Objects::dict_lookup(Address dict, std::string_view key) const {
  auto items = dict_items(dict);
  if (!items) return items.error();
  return find_str_key(*items, key);
}

Result<Address> Objects::instance_attribute(Address object, std::string_view name) const {
  if (!plausible(object)) return torn("implausible object address");
  auto type = type_of(object);
  if (!type) return type.error();
  if (!plausible(*type)) return torn("implausible type address");
  const std::uint64_t type_bytes =
      l_.heaptype_cached_keys != kAbsent ? l_.heaptype_cached_keys + 8 : l_.type_flags + 8;
  std::vector<std::byte> t(std::max(type_bytes, l_.type_dictoffset + 8));
  if (auto s = mem_.read(*type, t.data(), t.size()); !s) return as_torn(s.error());
  const auto flags = load<std::uint64_t>(t, l_.type_flags);

  Address dict = 0;
  Address values = 0;
  if (l_.at_least(3, 11) && (flags & kTpflagsManagedDict)) {
    // The dict (or its values) lives in the words just before the object.
    std::array<Address, 2> words{};  // [object - 32, object - 24]
    if (auto s = mem_.read(object - 32, words.data(), sizeof words); !s) return as_torn(s.error());
    if (l_.at_least(3, 13)) {
      dict = words[1];
      if (!dict && (flags & kTpflagsInlineValues)) {
        const Address inline_values = object + load<std::uint64_t>(t, l_.type_basicsize);
        auto valid = mem_.read<std::uint8_t>(inline_values + 3);  // PyDictValues.valid
        if (!valid) return as_torn(valid.error());
        if (*valid) values = inline_values;
      }
    } else if (l_.at_least(3, 12)) {
      // _PyDictOrValues: a tagged pointer, values when the low bit is set (stored as values-1).
      if (words[1] & 1) {
        values = words[1] + 1;
      } else {
        dict = words[1];
      }
    } else {
      values = words[0];
      dict = words[1];
    }
  } else {
    const auto offset = load<std::int64_t>(t, l_.type_dictoffset);
    if (offset <= 0) return Address{0};  // no instance dict we know how to find
    auto d = mem_.read_pointer(object + static_cast<std::uint64_t>(offset));
    if (!d) return as_torn(d.error());
    dict = *d;
  }
  Result<std::vector<Item>> items = std::vector<Item>{};
  if (dict) {
    items = dict_items(dict);
  } else if (values) {
    items = keys_items(load<Address>(t, l_.heaptype_cached_keys), values);
  } else {
    return Address{0};
  }
  if (!items) return items.error();
  return find_str_key(*items, name);
}

}  // namespace dapprof::sampler::python
