#include "protocol/batch.hpp"

#include <algorithm>
#include <iterator>
#include <string>
#include <utility>

#include "model/instruction_name.hpp"
#include "model/instruction_specialized.hpp"

namespace dapprof::protocol {
namespace {

template <typename T>
void append(std::vector<T>& to, std::vector<T>&& from) {
  if (to.empty()) {
    to = std::move(from);
    return;
  }
  to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

std::optional<double> earliest(std::optional<double> a, std::optional<double> b) {
  if (!a || !b) return a ? a : b;
  return std::min(*a, *b);
}

std::optional<double> latest(std::optional<double> a, std::optional<double> b) {
  if (!a || !b) return a ? a : b;
  return std::max(*a, *b);
}

Json frame_json(const model::Frame& frame) {
  Json f = {{"file", frame.file}, {"line", frame.line}, {"function", frame.function}};
  if (frame.native()) f["native"] = true;
  if (frame.task()) f["task"] = model::task_state_name(frame.task_state);
  if (frame.exception()) f["exception"] = true;
  if (frame.gc()) f["gc"] = true;
  if (!frame.module.empty()) f["module"] = frame.module;
  if (frame.debugger()) f["origin"] = "debugger";  // absent: the program's
  return f;
}

}  // namespace

std::uint64_t ProfilingBatch::sample_count() const {
  std::uint64_t count = samples.size();
  for (const auto& run : runs) count += run.count;
  return count;
}

ProfilingBatch merge(ProfilingBatch a, ProfilingBatch b) {
  append(a.new_frames, std::move(b.new_frames));
  append(a.new_stacks, std::move(b.new_stacks));
  append(a.threads, std::move(b.threads));
  append(a.processes, std::move(b.processes));
  append(a.samples, std::move(b.samples));
  append(a.thread_ids, std::move(b.thread_ids));
  if (!a.runs.empty() && !b.runs.empty() && a.runs.back().thread == b.runs.front().thread &&
      a.runs.back().stack == b.runs.front().stack) {
    a.runs.back().count += b.runs.front().count;
    b.runs.erase(b.runs.begin());
  }
  append(a.runs, std::move(b.runs));
  a.duration_ms += b.duration_ms;
  a.dropped_sample_count += b.dropped_sample_count;
  a.error_count += b.error_count;
  append(a.new_instructions, std::move(b.new_instructions));
  a.instruction_counts = merge_counts(std::move(a.instruction_counts), b.instruction_counts);
  a.start_time_ms = earliest(a.start_time_ms, b.start_time_ms);
  a.end_time_ms = latest(a.end_time_ms, b.end_time_ms);
  return a;
}

void drop_samples(ProfilingBatch& batch) {
  batch.dropped_sample_count += batch.sample_count();
  batch.samples.clear();
  batch.thread_ids.clear();
  batch.runs.clear();
  batch.instruction_counts.clear();  // counts of the samples dropped
  batch.start_time_ms.reset();       // they described the samples
  batch.end_time_ms.reset();
}

Json to_json(const ProfilingBatch& batch) {
  Json frames = Json::object();
  for (const auto& [id, frame] : batch.new_frames) frames[std::to_string(id)] = frame_json(frame);
  Json samples = Json::array();
  for (const auto& stack : batch.samples) samples.push_back(stack);
  Json threads = Json::object();
  for (const auto& t : batch.threads) {
    // Assignment keeps the last definition of a thread when merged batches define it twice.
    Json info = {{"name", t.name}, {"osThreadId", t.os_thread_id}};
    // Unknown only for a profile read from a file that does not say (collapsed stacks).
    if (t.pid > 0) info["pid"] = t.pid;
    if (t.thread_id != 0) info["pythonThreadId"] = std::to_string(t.thread_id);
    threads[std::to_string(t.os_thread_id)] = std::move(info);
  }
  Json processes = Json::object();
  for (const auto& p : batch.processes) {
    // Assignment keeps the later announcement (its end) when merged batches hold both.
    Json info = {{"pid", p.process.pid}, {"commandLine", p.process.command_line}};
    if (p.exited) info["exited"] = true;
    processes[std::to_string(p.process.pid)] = std::move(info);
  }
  Json body = {{"newFrames", std::move(frames)},
               {"samples", std::move(samples)},
               {"sampleCount", batch.sample_count()},
               {"duration", batch.duration_ms},
               {"threadIds", batch.thread_ids},
               {"threads", std::move(threads)},
               {"droppedSampleCount", batch.dropped_sample_count},
               {"errorCount", batch.error_count}};
  if (!processes.empty()) body["processes"] = std::move(processes);
  if (batch.encoding == Encoding::Stacks) {
    Json stacks = Json::object();
    for (const auto& [id, stack] : batch.new_stacks) stacks[std::to_string(id)] = stack;
    Json stack_ids = Json::array(), counts = Json::array(), thread_ids = Json::array();
    for (const auto& run : batch.runs) {
      stack_ids.push_back(run.stack);
      counts.push_back(run.count);
      thread_ids.push_back(run.thread);
    }
    body["newStacks"] = std::move(stacks);
    body["stackIds"] = std::move(stack_ids);
    body["stackCounts"] = std::move(counts);
    body["threadIds"] = std::move(thread_ids);
  }
  if (!batch.new_instructions.empty()) {
    Json defs = Json::object();
    for (const auto& [id, frame, in] : batch.new_instructions) {
      Json d = {{"frame", frame}, {"offset", in.offset}, {"opcode", model::instruction_name(in)}};
      if (in.stands_for_another() && !in.base_name.empty()) d["baseOpcode"] = in.base_name;
      d["specialized"] = model::specialized(in);
      if (in.line > 0) d["line"] = in.line;
      if (in.end_line > 0) d["endLine"] = in.end_line;
      if (in.has_columns()) {
        d["column"] = in.column;
        if (in.end_column >= 0) d["endColumn"] = in.end_column;
      }
      defs[std::to_string(id)] = std::move(d);
    }
    body["newInstructions"] = std::move(defs);
  }
  if (!batch.instruction_counts.empty()) {
    Json counts = Json::array();
    for (const auto& c : batch.instruction_counts) {
      counts.push_back(c.id);
      counts.push_back(c.own);
      counts.push_back(c.total);
    }
    body["instructionCounts"] = std::move(counts);
  }
  if (batch.start_time_ms) body["startTime"] = *batch.start_time_ms;
  if (batch.end_time_ms) body["endTime"] = *batch.end_time_ms;
  return body;
}

BatchBuilder::BatchBuilder(FrameTable table, Encoding encoding) : table_(std::move(table)) {
  pending_.encoding = encoding;
}

void BatchBuilder::add_thread(const model::ThreadInfo& info) {
  // A TID can be reused by a new thread, and a thread's name can change: announce it again.
  if (auto [it, inserted] = threads_.try_emplace(info.os_thread_id, info);
      inserted || it->second != info) {
    it->second = info;
    pending_.threads.push_back(info);
  }
}

Result<FrameId> BatchBuilder::wire_frame(const model::Frame& frame, bool classify) {
  auto interned =
      frame.instruction ? table_.intern(model::without_instruction(frame)) : table_.intern(frame);
  if (!interned) return interned.error();
  // Classified once, when the frame is first announced.
  if (interned->is_new)
    pending_.new_frames.push_back(
        {interned->id, model::without_instruction(classify ? model::classified(frame) : frame)});
  if (frame.instruction) sites_.push_back({interned->id, &*frame.instruction});
  return interned->id;
}

Status BatchBuilder::add(const model::ThreadStack& thread) {
  add_thread(thread.info);
  std::vector<FrameId> stack(thread.frames.size());
  auto out = stack.rbegin();  // the sampler gives innermost first; the protocol wants root first
  sites_.clear();
  for (const auto& frame : thread.frames) {
    auto id = wire_frame(frame, true);
    if (!id) return id.error();
    *out++ = *id;
  }
  if (!sites_.empty()) instructions_.add(sites_);
  add_sample(thread.info.os_thread_id, std::move(stack), std::nullopt);
  return Ok{};
}

Status BatchBuilder::add(const model::ThreadInfo& thread,
                         std::span<const std::uint32_t> innermost_first,
                         std::span<const model::Frame> frames,
                         std::optional<std::uint32_t> stack_index) {
  add_thread(thread);
  if (pending_.encoding == Encoding::Stacks && stack_index) {
    // A stack sent before: its frames are too, and nothing of it needs looking up again.
    if (const auto id = stack_ids_.find(*stack_index)) {
      add_run(thread.os_thread_id, *id);
      return Ok{};
    }
  }
  std::vector<FrameId> stack(innermost_first.size());
  auto out = stack.rbegin();
  sites_.clear();
  for (const auto index : innermost_first) {
    const model::Frame& frame = frames[index];
    by_value_ = by_value_ || frame.instruction.has_value();
    if (by_value_) {
      // The store's frames differ by instruction where the wire's do not: one ID per line (and
      // from then on every frame by value, so that one whose instruction was unreadable gets the
      // same ID as its line's).
      auto id = wire_frame(frame, false);
      if (!id) return id.error();
      *out++ = *id;
      continue;
    }
    auto interned = table_.intern(index, frame);
    if (!interned) return interned.error();
    if (interned->is_new) pending_.new_frames.push_back({interned->id, frame});
    *out++ = interned->id;
  }
  // The store's stack index names a stack with its instructions: two of them may be one stack on
  // the wire, so such a stack is interned by its frames.
  if (!sites_.empty()) {
    instructions_.add(sites_);
    stack_index.reset();
  }
  add_sample(thread.os_thread_id, std::move(stack), stack_index);
  return Ok{};
}

void BatchBuilder::add_sample(ThreadId thread, std::vector<FrameId>&& root_first,
                              std::optional<std::uint32_t> stack_index) {
  if (pending_.encoding == Encoding::Frames) {
    pending_.samples.push_back(std::move(root_first));
    pending_.thread_ids.push_back(thread);
    return;
  }
  // Interned only once its frames all have IDs, so that no stack ID is ever used unannounced.
  const auto interned =
      stack_index ? stack_ids_.intern(*stack_index) : stack_ids_.intern(root_first);
  if (interned.is_new) pending_.new_stacks.push_back({interned.id, std::move(root_first)});
  add_run(thread, interned.id);
}

void BatchBuilder::add_run(ThreadId thread, StackId stack) {
  auto& runs = pending_.runs;
  if (!runs.empty() && runs.back().thread == thread && runs.back().stack == stack)
    ++runs.back().count;
  else
    runs.push_back({thread, stack, 1});
}

void BatchBuilder::add_process(const model::ProcessInfo& process) {
  if (processes_.try_emplace(process.pid, process).second) pending_.processes.push_back({process});
}

void BatchBuilder::process_exited(pid_t pid) {
  const auto it = processes_.find(pid);
  if (it == processes_.end()) return;  // never announced, or its end already was
  pending_.processes.push_back({it->second, true});
  processes_.erase(it);  // a reused pid is a process of its own
}

Status BatchBuilder::add(const model::Snapshot& snapshot) {
  if (snapshot.process) add_process(*snapshot.process);
  if (snapshot.process_exited) process_exited(snapshot.pid);
  for (const auto& thread : snapshot.threads)
    if (auto status = add(thread); !status) return status;
  return Ok{};
}

bool BatchBuilder::empty() const {
  return pending_.samples.empty() && pending_.runs.empty() && pending_.new_frames.empty() &&
         pending_.new_stacks.empty() && pending_.threads.empty() && pending_.processes.empty() &&
         pending_.error_count == 0 && pending_.dropped_sample_count == 0 && instructions_.empty();
}

ProfilingBatch BatchBuilder::take(double duration_ms) {
  ProfilingBatch batch = std::move(pending_);
  pending_ = ProfilingBatch{};
  batch.new_instructions = instructions_.take_definitions();
  batch.instruction_counts = instructions_.take_counts();
  pending_.encoding = batch.encoding;
  batch.duration_ms = duration_ms;
  return batch;
}

}  // namespace dapprof::protocol
