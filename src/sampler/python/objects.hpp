#pragma once
// Reading Python objects (str, bytes, int, dict, instance attributes) out of another process's
// memory, for one CPython layout. Every read is checked for plausibility: in a running target a
// pointer may be stale, and that must end in an error (TornRead), never in a crash or a hang.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "sampler/process/memory.hpp"
#include "sampler/python/layout.hpp"

namespace dapprof::sampler::python {

using process::Address;

// Addresses of the built-in type objects (0 where the symbol is missing: no type check then).
struct TypeAddresses {
  Address code = 0;
  Address str = 0;
  Address bytes = 0;
  Address dict = 0;
  Address long_ = 0;
};

// Could `address` point at a Python object or frame? (user-space x86-64, 8-byte aligned.) A
// pointer read from a running target that fails this is torn; checking it first keeps garbage
// from turning into huge reads or arithmetic overflow.
inline bool plausible(Address address) {
  return address >= 4096 && address < (Address{1} << 47) && address % 8 == 0;
}

// 3.14+: a _PyStackRef (f_executable, fast locals, a value stack's items, a task's fields) is
// a pointer whose low bits are tags (1 bit on 3.14, 2 on 3.15); objects are at least 8-aligned,
// so masking 3 bits is right on every version.
constexpr Address kStackRefTagBits = 7;

// A field of a structure copied out of the target; zero if the copy is too short for it (or the
// field is kAbsent: the test must not overflow).
template <typename T>
T load(std::span<const std::byte> buf, std::uint64_t offset) {
  T v{};
  if (offset <= buf.size() && sizeof(T) <= buf.size() - offset)
    std::memcpy(&v, buf.data() + offset, sizeof(T));
  return v;
}

// The same where the caller knows the bytes hold the field (a frame or thread state read whole):
// no test, for the loops that read a field of every frame.
template <typename T>
T load_at(const std::byte* base, std::uint64_t offset) {
  T v;
  std::memcpy(&v, base + offset, sizeof(T));
  return v;
}

// What a read of a running target that found inconsistent data returns.
inline Error torn(const char* what) { return Error{what, ErrorCode::TornRead}; }

// A read error as seen by the stack walker: unmapped addresses become TornRead (the process is
// alive, so the pointer was stale); process exit and permission errors keep their code.
Error as_torn(const Error& e);

class Objects {
 public:
  Objects(const process::ProcessMemory& memory, const Layout& layout, const TypeAddresses& types)
      : mem_(memory), l_(layout), types_(types) {}

  const process::ProcessMemory& memory() const { return mem_; }
  const Layout& layout() const { return l_; }
  const TypeAddresses& types() const { return types_; }

  Result<Address> type_of(Address object) const;
  // A type object's tp_name, cut at max_len bytes.
  Result<std::string> type_name(Address type, std::size_t max_len) const;
  // UTF-8; with max_chars, only that many code points are read, and `length` (if given)
  // receives the whole string's.
  Result<std::string> str(Address object, std::size_t max_chars = SIZE_MAX,
                          std::size_t* length = nullptr) const;
  // The same for bytes, counted in bytes.
  Result<std::vector<std::uint8_t>> bytes(Address object, std::size_t max_size = SIZE_MAX,
                                          std::size_t* length = nullptr) const;
  Result<std::uint64_t> unsigned_int(Address object) const;  // non-negative ints up to 64 bits

  struct Item {
    Address key;
    Address value;
  };
  Result<std::vector<Item>> dict_items(Address dict) const;
  // The value whose key is the str `key`; 0 if absent.
  Result<Address> dict_lookup(Address dict, std::string_view key) const;
  // An instance attribute stored in the object's __dict__ (or its inline values); 0 if absent.
  Result<Address> instance_attribute(Address object, std::string_view name) const;

 private:
  // Items of a keys table; values from `values` (split tables) when non-zero.
  Result<std::vector<Item>> keys_items(Address keys, Address values) const;
  Result<Address> find_str_key(const std::vector<Item>& items, std::string_view key) const;

  const process::ProcessMemory& mem_;
  const Layout& l_;
  TypeAddresses types_;
};

}  // namespace dapprof::sampler::python
