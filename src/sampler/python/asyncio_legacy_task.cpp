#include "sampler/python/asyncio_legacy_task.hpp"

#include "sampler/python/asyncio_tasks.hpp"

namespace dapprof::sampler::python {
namespace {

using Chunk = process::ProcessMemory::Chunk;

constexpr std::int32_t kPending = 0;  // fut_state: STATE_PENDING
constexpr std::int64_t kMaxCallbacks = 1024;
constexpr int kMaxPlausibleCancels = 1 << 20;
// Tasks copied per system call: a batch of 176-byte tasks stays within a few hundred KiB.
constexpr std::size_t kBatch = 1024;

}  // namespace

Result<std::vector<LegacyTask>> read_legacy_tasks(const Objects& objects, ObjectKinds& kinds,
                                                  const std::vector<Address>& candidates,
                                                  std::uint64_t& torn) {
  const Layout& l = objects.layout();
  const auto& mem = objects.memory();
  std::vector<LegacyTask> out;
  std::vector<std::byte> bytes;
  std::vector<Chunk> chunks;
  for (std::size_t start = 0; start < candidates.size(); start += kBatch) {
    const std::size_t n = std::min(kBatch, candidates.size() - start);
    bytes.assign(n * l.task_size, std::byte{0});
    chunks.clear();
    std::vector<char> failed(n, 0);
    for (std::size_t k = 0; k < n; ++k) {
      if (plausible(candidates[start + k]))
        chunks.push_back({candidates[start + k], bytes.data() + k * l.task_size, l.task_size});
      else
        failed[k] = 1;
    }
    if (!mem.read_many(chunks)) {
      for (const auto& c : chunks) {
        if (!mem.read(c.addr, c.out, c.size))
          failed[(static_cast<std::byte*>(c.out) - bytes.data()) / l.task_size] = 1;
      }
    }
    for (std::size_t k = 0; k < n; ++k) {
      if (failed[k]) {
        ++torn;
        continue;
      }
      const std::vector<std::byte> t(bytes.begin() + k * l.task_size,
                                     bytes.begin() + (k + 1) * l.task_size);
      auto kind = kinds.of_type(load<Address>(t, l.object_type));
      if (!kind) {
        if (kind.code() != ErrorCode::TornRead) return kind.error();
        ++torn;
        continue;
      }
      if (*kind != ObjectKind::Task || load<std::int32_t>(t, l.future_state) != kPending) continue;
      LegacyTask task;
      task.id = candidates[start + k];
      task.coro = load<Address>(t, l.task_coro);
      task.fut_waiter = load<Address>(t, l.task_fut_waiter);
      task.loop = load<Address>(t, l.future_loop);
      task.callback0 = load<Address>(t, l.future_callback0);
      task.callbacks = load<Address>(t, l.future_callbacks);
      const auto counter = l.task_num_cancels_requested != kAbsent ? l.task_num_cancels_requested
                                                                   : l.task_must_cancel;
      const auto cancels = load<std::int32_t>(t, counter);
      if (cancels < 0 || cancels > kMaxPlausibleCancels) {
        ++torn;
        continue;
      }
      task.cancelling = cancels > 0;
      auto name = task_name_text(objects, load<Address>(t, l.task_name));
      if (!name) {
        if (name.code() != ErrorCode::TornRead) return name.error();
        ++torn;
        continue;
      }
      task.name = std::move(*name);
      out.push_back(std::move(task));
    }
  }
  return out;
}

Result<std::vector<Address>> done_callbacks(const Objects& objects, Address callback0,
                                            Address callbacks) {
  const Layout& l = objects.layout();
  std::vector<Address> out;
  if (callback0 != 0) out.push_back(callback0);
  if (callbacks == 0) return out;
  if (!plausible(callbacks)) return torn("implausible callback list");
  std::int64_t size = 0;
  Address items = 0;
  std::vector<Chunk> c{{callbacks + l.list_size, &size, 8}, {callbacks + l.list_items, &items, 8}};
  if (auto s = objects.memory().read_many(c); !s) return as_torn(s.error());
  if (size < 0 || size > kMaxCallbacks || (size > 0 && !plausible(items)))
    return torn("implausible callback list");
  std::vector<Address> tuples(static_cast<std::size_t>(size));
  if (size > 0) {
    if (auto s = objects.memory().read(items, tuples.data(), tuples.size() * 8); !s)
      return as_torn(s.error());
  }
  // Each entry is a (callback, context) tuple.
  std::vector<Address> first(tuples.size());
  std::vector<Chunk> reads;
  for (std::size_t i = 0; i < tuples.size(); ++i) {
    if (!plausible(tuples[i])) return torn("implausible callback entry");
    reads.push_back({tuples[i] + l.tuple_items, &first[i], 8});
  }
  if (auto s = objects.memory().read_many(reads); !s) return as_torn(s.error());
  for (auto f : first)
    if (f != 0) out.push_back(f);
  return out;
}

}  // namespace dapprof::sampler::python
