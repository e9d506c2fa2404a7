#include "formats/profile.hpp"

#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace dapprof::formats {
namespace {

std::uint32_t next_index(std::size_t size) {
  if (size >= std::numeric_limits<std::uint32_t>::max()) {
    throw std::length_error("profile: too many distinct frames, stacks or threads");
  }
  return static_cast<std::uint32_t>(size);
}

}  // namespace

std::size_t Profile::ThreadKeyHash::operator()(const ThreadKey& k) const {
  const std::uint64_t parts[3] = {static_cast<std::uint64_t>(k.pid), k.thread_id, k.os_thread_id};
  return static_cast<std::size_t>(XXH3_64bits(parts, sizeof parts));
}

std::uint32_t Profile::add_frame(const model::Frame& frame) { return stacks_.add_frame(frame); }

std::uint32_t Profile::add_stack(std::span<const model::Frame> innermost_first) {
  return stacks_.add_stack(innermost_first);
}

std::uint32_t Profile::add_stack(std::span<const model::Frame> innermost_first,
                                 const model::ThreadInfo& thread) {
  const auto it = thread_ids_.find(ThreadKey{thread.pid, thread.thread_id, thread.os_thread_id});
  if (it == thread_ids_.end()) return stacks_.add_stack(innermost_first);
  return stack_of(it->second, innermost_first);
}

std::uint32_t Profile::stack_of(std::uint32_t thread,
                                std::span<const model::Frame> innermost_first) {
  const auto previous = last_stack_[thread];
  return previous == kNoStack ? stacks_.add_stack(innermost_first)
                              : stacks_.add_stack(innermost_first, previous);
}

std::uint32_t Profile::add_thread(const model::ThreadInfo& thread) {
  const ThreadKey key{thread.pid, thread.thread_id, thread.os_thread_id};
  auto it = thread_ids_.find(key);
  if (it != thread_ids_.end()) {
    // Compared first: a snapshot names every thread again, and the name rarely changes.
    auto& known = threads_[it->second].name;
    if (!thread.name.empty() && known != thread.name) known = thread.name;
    return it->second;
  }
  const auto id = next_index(threads_.size());
  threads_.push_back(thread);
  last_stack_.push_back(kNoStack);
  thread_ids_.emplace(key, id);
  return id;
}

void Profile::add_sample(std::uint32_t thread, std::uint32_t stack, std::int64_t time_us,
                         double weight, ThreadState state) {
  if (thread >= threads_.size() || stack >= stacks().size()) {
    throw std::out_of_range("profile: sample refers to an unknown thread or stack");
  }
  samples_.add(Sample{thread, stack, time_us, weight, state});
  last_stack_[thread] = stack;
}

void Profile::add_process(const model::ProcessInfo& process) {
  if (const auto [it, added] = processes_.try_emplace(process.pid, process);
      !added && it->second != process)
    it->second = process;
}

model::ProcessInfo Profile::process(pid_t pid) const {
  const auto it = processes_.find(pid);
  return it != processes_.end() ? it->second : model::ProcessInfo{.pid = pid, .command_line = {}};
}

void Profile::add_snapshot(const model::Snapshot& snapshot,
                           std::chrono::steady_clock::time_point start) {
  if (snapshot.process) add_process(*snapshot.process);
  const auto t =
      std::chrono::duration_cast<std::chrono::microseconds>(snapshot.time - start).count();
  for (const auto& thread : snapshot.threads) {
    const auto tid = add_thread(thread.info);
    add_sample(tid, stack_of(tid, thread.frames), std::max<std::int64_t>(t, 0), 1,
               state_of(thread));
  }
}

std::int64_t Profile::end_us() const {
  const auto latest = samples_.latest_time_us();
  return latest ? std::max(duration_us, *latest + interval_us) : duration_us;
}

bool Profile::multiple_processes() const {
  return std::any_of(threads_.begin(), threads_.end(),
                     [&](const model::ThreadInfo& t) { return t.pid != threads_.front().pid; });
}

ThreadState state_of(const model::ThreadStack& thread) {
  return {.known = true, .active = thread.active, .gil = thread.owns_gil};
}

std::string frame_label(const model::Frame& frame) {
  if (!frame.task() && !frame.gc() && frame.file.empty()) return frame.function;
  const auto place = model::frame_place(frame);
  if (frame.line <= 0) return fmt::format("{} ({})", frame.function, place);
  return fmt::format("{} ({}:{})", frame.function, place, frame.line);
}

model::Frame thread_frame(const model::ThreadInfo& thread) {
  model::Frame f;
  f.function = thread.name.empty()
                   ? fmt::format("thread (0x{:x})", thread.thread_id)
                   : fmt::format("thread (0x{:x}) \"{}\"", thread.thread_id, thread.name);
  return f;
}

model::Frame process_frame(const model::ProcessInfo& process) {
  model::Frame f;
  if (process.command_line.empty()) {
    f.function = fmt::format("process {}", process.pid);
    return f;
  }
  std::string command = process.command_line;
  std::replace(command.begin(), command.end(), ';', ',');
  f.function = fmt::format("process {}:\"{}\"", process.pid, command);
  return f;
}

DisplayStacks::DisplayStacks(const Profile& profile, const WriteOptions& options)
    : profile_(profile), frames_(profile.frames()) {
  const bool processes = profile.process_level();
  std::unordered_map<pid_t, std::uint32_t> process_ids;
  for (const auto& thread : profile.threads()) {
    std::vector<std::uint32_t> prefix;
    if (processes) {
      auto [it, added] = process_ids.try_emplace(thread.pid, next_index(frames_.size()));
      if (added) frames_.push_back(process_frame(profile.process(thread.pid)));
      prefix.push_back(it->second);
    }
    if (options.threads) {
      prefix.push_back(next_index(frames_.size()));
      frames_.push_back(thread_frame(thread));
    }
    prefix_.push_back(std::move(prefix));
  }
}

std::vector<std::uint32_t> DisplayStacks::path(const Sample& sample) const {
  const auto& stack = profile_.stacks()[sample.stack];
  std::vector<std::uint32_t> out = prefix_[sample.thread];
  out.insert(out.end(), stack.rbegin(), stack.rend());
  return out;
}

}  // namespace dapprof::formats
