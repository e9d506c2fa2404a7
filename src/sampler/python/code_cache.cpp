#include "sampler/python/code_cache.hpp"

namespace dapprof::sampler::python {
namespace {

constexpr std::size_t kMaxCachedCodes = 1 << 16;  // then start over rather than grow without bound
// More code units than any compiler makes (2^28 is 512 MiB of bytecode): a size word this large,
// or negative, was read from something that is not, or no longer, a code object.
constexpr std::int64_t kMaxCodeUnits = std::int64_t{1} << 28;

}  // namespace

CodeCache::CodeCache(const Objects& objects) : objects_(objects) {
  const Layout& l = objects.layout();
  format_ = l.at_least(3, 11)   ? LineTableFormat::Locations311
            : l.at_least(3, 10) ? LineTableFormat::Linetable310
                                : LineTableFormat::Lnotab;
}

CodeInfo CodeCache::identity(std::span<const std::byte> header) const {
  const Layout& l = objects_.layout();
  CodeInfo info;
  info.name_ptr = load<Address>(header, l.code_name);
  info.qualname_ptr = load<Address>(header, l.code_qualname);
  info.filename_ptr = load<Address>(header, l.code_filename);
  info.linetable_ptr = load<Address>(header, l.code_linetable);
  info.code_bytes_ptr = load<Address>(header, l.code_code);
  info.first_line = load<int>(header, l.code_firstlineno);
  info.first_traceable = load<int>(header, l.code_firsttraceable);
  // A code object is a variable-size object like a tuple: its size word is where a tuple's is.
  if (l.at_least(3, 11)) info.code_units = load<std::int64_t>(header, l.tuple_size);
  return info;
}

Result<const CodeInfo*> CodeCache::get(Address code, std::span<const std::byte> header) {
  CodeInfo fresh = identity(header);
  if (objects_.layout().at_least(3, 11) &&
      (fresh.code_units < 0 || fresh.code_units > kMaxCodeUnits)) {
    return torn("absurd code object size");
  }
  if (auto it = cache_.find(code); it != cache_.end()) {
    const CodeInfo& c = it->second;
    if (c.name_ptr == fresh.name_ptr && c.qualname_ptr == fresh.qualname_ptr &&
        c.filename_ptr == fresh.filename_ptr && c.linetable_ptr == fresh.linetable_ptr &&
        c.code_bytes_ptr == fresh.code_bytes_ptr && c.first_line == fresh.first_line &&
        c.first_traceable == fresh.first_traceable && c.code_units == fresh.code_units) {
      return &c;
    }
    cache_.erase(it);
  }
  ++misses_;
  const Address function_ptr = fresh.qualname_ptr ? fresh.qualname_ptr : fresh.name_ptr;
  auto function = objects_.str(function_ptr);
  if (!function) return function.error();
  auto file = objects_.str(fresh.filename_ptr);
  if (!file) return file.error();
  auto table = objects_.bytes(fresh.linetable_ptr);
  if (!table) return table.error();
  fresh.function = std::move(*function);
  fresh.file = std::move(*file);
  fresh.linetable = std::move(*table);
  if (cache_.size() >= kMaxCachedCodes) cache_.clear();
  return &cache_.emplace(code, std::move(fresh)).first->second;
}

}  // namespace dapprof::sampler::python
