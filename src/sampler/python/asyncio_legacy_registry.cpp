#include "sampler/python/asyncio_legacy_registry.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace dapprof::sampler::python {
namespace {

using Chunk = process::ProcessMemory::Chunk;

// A set of 100,000 tasks has a table of 2^18 slots; more is a misread.
constexpr std::int64_t kMaxSetSlots = std::int64_t{1} << 20;
// A set entry whose key was removed keeps the dummy key with hash -1, which no live key has.
constexpr std::int64_t kRemovedHash = -1;

Result<Address> module_dict(const Objects& objects, Address modules, std::string_view name) {
  auto module = objects.dict_lookup(modules, name);
  if (!module || *module == 0) return module;
  // PyModuleObject: md_dict follows the object header.
  auto dict = objects.memory().read_pointer(*module + 2 * sizeof(Address));
  if (!dict) return as_torn(dict.error());
  return *dict;
}

Error not_imported(std::string_view what) {
  return Error{fmt::format("the program has not imported {}: it has no tasks to show", what),
               ErrorCode::NotPython};
}

}  // namespace

Result<std::vector<Address>> set_keys(const Objects& objects, Address set, std::size_t max,
                                      bool& truncated) {
  const Layout& l = objects.layout();
  if (!plausible(set)) return torn("implausible set address");
  std::int64_t used = 0, mask = 0;
  Address table = 0;
  std::vector<Chunk> c{
      {set + l.set_used, &used, 8}, {set + l.set_mask, &mask, 8}, {set + l.set_table, &table, 8}};
  if (auto s = objects.memory().read_many(c); !s) return as_torn(s.error());
  if (mask < 0 || mask >= kMaxSetSlots || used < 0 || used > mask + 1 || !plausible(table))
    return torn("implausible set");
  const std::size_t slots = static_cast<std::size_t>(mask) + 1;
  std::vector<std::byte> entries(slots * l.set_entry_size);
  if (auto s = objects.memory().read(table, entries.data(), entries.size()); !s)
    return as_torn(s.error());
  std::vector<Address> keys;
  for (std::size_t i = 0; i < entries.size(); i += l.set_entry_size) {
    const auto key = load<Address>(entries, i);
    if (key == 0 || load<std::int64_t>(entries, i + 8) == kRemovedHash) continue;
    if (keys.size() >= max) {
      truncated = true;
      break;
    }
    keys.push_back(key);
  }
  return keys;
}

Result<LegacyRegistryPlaces> find_legacy_registry(const Objects& objects, Address modules) {
  const Layout& l = objects.layout();
  LegacyRegistryPlaces at;
  auto tasks_dict = module_dict(objects, modules, "asyncio.tasks");
  if (!tasks_dict) return tasks_dict.error();
  if (*tasks_dict == 0) return not_imported("asyncio");
  auto c_dict = module_dict(objects, modules, "_asyncio");
  if (!c_dict) return c_dict.error();
  if (*c_dict == 0) return not_imported("_asyncio (asyncio runs without its C accelerator)");
  for (auto [name, out] : {std::pair{"Task", &at.task_type}, {"Future", &at.future_type}}) {
    auto type = objects.dict_lookup(*c_dict, name);
    if (!type) return type.error();
    if (*type == 0) return torn("_asyncio has no Task or Future");
    *out = *type;
  }
  // Weak references to the tasks: each points at its task, or at None once the task is gone.
  const bool split = l.at_least(3, 12);
  auto weak = objects.dict_lookup(*tasks_dict, split ? "_scheduled_tasks" : "_all_tasks");
  if (!weak) return weak.error();
  if (*weak == 0) return torn("asyncio.tasks has no task registry");
  auto data = objects.instance_attribute(*weak, "data");
  if (!data) return data.error();
  if (*data == 0) return torn("the task WeakSet has no data set");
  at.weak_data = *data;
  if (split) {
    auto eager = objects.dict_lookup(*tasks_dict, "_eager_tasks");
    if (!eager) return eager.error();
    at.eager = *eager;
  }
  auto current = objects.dict_lookup(*tasks_dict, "_current_tasks");
  if (!current) return current.error();
  at.current = *current;
  return at;
}

Result<LegacyRegistry> read_legacy_registry(const Objects& objects,
                                            const LegacyRegistryPlaces& places,
                                            std::size_t max_tasks) {
  const Layout& l = objects.layout();
  LegacyRegistry reg;
  reg.task_type = places.task_type;
  reg.future_type = places.future_type;
  auto refs = set_keys(objects, places.weak_data, max_tasks, reg.truncated);
  if (!refs) return refs.error();
  std::vector<Address> referents(refs->size());
  std::vector<Chunk> chunks;
  for (std::size_t i = 0; i < refs->size(); ++i)
    chunks.push_back({(*refs)[i] + l.weakref_object, &referents[i], sizeof(Address)});
  std::vector<char> failed;
  objects.memory().read_each(chunks, failed);
  for (std::size_t i = 0; i < referents.size(); ++i) {
    if (failed[i]) {
      ++reg.torn;
      continue;
    }
    if (referents[i] != 0) reg.tasks.push_back(referents[i]);
  }
  if (places.eager != 0) {
    auto keys = set_keys(objects, places.eager, max_tasks, reg.truncated);
    if (!keys) return keys.error();
    reg.tasks.insert(reg.tasks.end(), keys->begin(), keys->end());
  }
  std::sort(reg.tasks.begin(), reg.tasks.end());
  reg.tasks.erase(std::unique(reg.tasks.begin(), reg.tasks.end()), reg.tasks.end());
  if (places.current != 0) {
    auto items = objects.dict_items(places.current);
    if (!items) return items.error();
    for (const auto& item : *items) reg.current.emplace_back(item.key, item.value);
  }
  return reg;
}

}  // namespace dapprof::sampler::python
