#include "sampler/python/thread_names.hpp"

namespace dapprof::sampler::python {

void ThreadNames::update(Address interp, const std::vector<std::uint64_t>& thread_ids) {
  const auto now = std::chrono::steady_clock::now();
  bool unknown = false;
  for (auto id : thread_ids) unknown = unknown || (!names_.contains(id) && !unnamed_.contains(id));
  const auto age = now - last_refresh_;
  if (age < kRefresh && !(unknown && age >= kRetryUnknown)) return;
  last_refresh_ = now;
  if (!refresh(interp)) active_ = 0;  // look the dict up again next time
  // Threads threading does not know (yet) are retried with the periodic refresh only.
  unnamed_.clear();
  for (auto id : thread_ids) {
    if (!names_.contains(id)) unnamed_.insert(id);
  }
}

std::string ThreadNames::name(std::uint64_t thread_id) const {
  auto it = names_.find(thread_id);
  return it == names_.end() ? std::string{} : it->second;
}

Result<Address> ThreadNames::active_dict(Address interp) {
  if (active_) return active_;
  const Layout& l = objects_.layout();
  auto modules = objects_.memory().read_pointer(interp + l.interp_modules);
  if (!modules) return modules.error();
  if (*modules == 0) return Address{0};
  auto threading = objects_.dict_lookup(*modules, "threading");
  if (!threading || *threading == 0) return threading;
  // PyModuleObject: the module's __dict__ (md_dict) follows the object header.
  auto md_dict = objects_.memory().read_pointer(*threading + 2 * sizeof(Address));
  if (!md_dict) return md_dict.error();
  auto active = objects_.dict_lookup(*md_dict, "_active");
  if (!active) return active;
  active_ = *active;
  return active_;
}

Status ThreadNames::refresh(Address interp) {
  auto active = active_dict(interp);
  if (!active) return active.error();
  if (*active == 0) return Ok{};  // threading not imported: no names to find
  auto items = objects_.dict_items(*active);
  if (!items) return items.error();
  std::unordered_map<std::uint64_t, std::string> names;
  for (const auto& item : *items) {
    auto ident = objects_.unsigned_int(item.key);
    if (!ident) continue;
    auto name_obj = objects_.instance_attribute(item.value, "_name");
    if (!name_obj || *name_obj == 0) continue;
    if (auto name = objects_.str(*name_obj)) names.emplace(*ident, std::move(*name));
  }
  names_ = std::move(names);
  return Ok{};
}

}  // namespace dapprof::sampler::python
