#include "sampler/python/asyncio_legacy_awaiters.hpp"

#include <algorithm>

namespace dapprof::sampler::python {
namespace {

// Futures leading to futures: gather of a gather of a gather... deeper than this is not followed.
constexpr int kMaxDepth = 8;
// Closures and partial arguments hold a few objects; more is a misread.
constexpr std::int64_t kMaxItems = 256;

}  // namespace

LegacyAwaiters::LegacyAwaiters(const Objects& objects, ObjectKinds& kinds,
                               const std::vector<LegacyTask>& tasks)
    : objects_(objects), kinds_(kinds), tasks_(tasks) {
  for (const auto& t : tasks) {
    if (t.fut_waiter != 0) waiting_on_.emplace(t.fut_waiter, t.id);
    is_task_.emplace(t.id, true);
  }
}

Result<std::vector<std::uint64_t>> LegacyAwaiters::of(std::size_t i, bool& unfollowed) {
  const LegacyTask& t = tasks_[i];
  std::vector<std::uint64_t> out;
  auto range = waiting_on_.equal_range(t.id);
  for (auto it = range.first; it != range.second; ++it) out.push_back(it->second);
  auto callbacks = done_callbacks(objects_, t.callback0, t.callbacks);
  if (!callbacks) return callbacks.error();
  dangling_ = false;
  for (Address cb : *callbacks)
    if (auto s = through(cb, 0, out); !s) return s.error();
  unfollowed = dangling_;
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Status LegacyAwaiters::awaiting(Address future, int depth, std::vector<std::uint64_t>& out) {
  auto range = waiting_on_.equal_range(future);
  if (range.first != range.second) {
    for (auto it = range.first; it != range.second; ++it) out.push_back(it->second);
    return Ok{};
  }
  if (depth >= kMaxDepth) return Ok{};
  // No task awaits it: what awaits it may be another future, through its own done-callbacks.
  const Layout& l = objects_.layout();
  Address words[2] = {};
  std::vector<process::ProcessMemory::Chunk> c{{future + l.future_callback0, &words[0], 8},
                                               {future + l.future_callbacks, &words[1], 8}};
  if (auto s = objects_.memory().read_many(c); !s) return as_torn(s.error());
  auto callbacks = done_callbacks(objects_, words[0], words[1]);
  if (!callbacks) return callbacks.error();
  for (Address cb : *callbacks)
    if (auto s = through(cb, depth + 1, out); !s) return s.error();
  return Ok{};
}

Status LegacyAwaiters::through(Address callback, int depth, std::vector<std::uint64_t>& out) {
  const Layout& l = objects_.layout();
  const auto& mem = objects_.memory();
  if (!plausible(callback)) return torn("implausible done-callback");
  auto kind = kinds_.of(callback);
  if (!kind) return kind.error();
  switch (*kind) {
    case ObjectKind::Function: {
      auto closure = mem.read<Address>(callback + l.function_closure);
      if (!closure) return as_torn(closure.error());
      return *closure == 0 ? Ok{} : through_futures_in(*closure, depth, true, out);
    }
    case ObjectKind::Partial: {
      auto args = mem.read<Address>(callback + l.partial_args);
      if (!args) return as_torn(args.error());
      return *args == 0 ? Ok{} : through_futures_in(*args, depth, false, out);
    }
    case ObjectKind::Method: {
      auto self = mem.read<Address>(callback + l.method_self);
      if (!self) return as_torn(self.error());
      auto self_kind = kinds_.of(*self);
      if (!self_kind) return self_kind.error();
      if (*self_kind == ObjectKind::Future) return leads_to_tasks(*self, depth, out);
      if (*self_kind != ObjectKind::Other) return Ok{};
      // A TaskGroup's _on_task_done: the group knows the task that entered it.
      auto parent = objects_.instance_attribute(*self, "_parent_task");
      if (!parent) return parent.error();
      if (*parent != 0 && is_task_.contains(*parent)) out.push_back(*parent);
      return Ok{};
    }
    default:
      return Ok{};
  }
}

Status LegacyAwaiters::through_futures_in(Address tuple, int depth, bool cells,
                                          std::vector<std::uint64_t>& out) {
  const Layout& l = objects_.layout();
  const auto& mem = objects_.memory();
  if (!plausible(tuple)) return torn("implausible tuple");
  auto size = mem.read<std::int64_t>(tuple + l.tuple_size);
  if (!size) return as_torn(size.error());
  if (*size < 0 || *size > kMaxItems) return torn("implausible tuple size");
  std::vector<Address> items(static_cast<std::size_t>(*size));
  if (!items.empty()) {
    if (auto s = mem.read(tuple + l.tuple_items, items.data(), items.size() * 8); !s)
      return as_torn(s.error());
  }
  for (Address item : items) {
    if (cells) {  // a closure's cells: the variables are their contents
      if (!plausible(item)) return torn("implausible closure cell");
      auto content = mem.read<Address>(item + l.cell_ref);
      if (!content) return as_torn(content.error());
      item = *content;
    }
    if (item == 0 || !plausible(item)) continue;  // an empty cell
    // A future held there is one the callback completes: whoever awaits it awaits this task. A
    // task held there is not (a callback may cancel a task, or name one for any other reason).
    auto kind = kinds_.of(item);
    if (!kind) return kind.error();
    if (*kind == ObjectKind::Future)
      if (auto s = leads_to_tasks(item, depth, out); !s) return s.error();
  }
  return Ok{};
}

Status LegacyAwaiters::leads_to_tasks(Address future, int depth, std::vector<std::uint64_t>& out) {
  const std::size_t before = out.size();
  if (auto s = awaiting(future, depth, out); !s) return s;
  // A future the task's own callback completes, which no task awaits (yet, or through something
  // not followed here): the task is awaited, by whom is not known.
  if (depth == 0 && out.size() == before) dangling_ = true;
  return Ok{};
}

}  // namespace dapprof::sampler::python
