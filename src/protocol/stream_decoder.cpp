#include "protocol/stream_decoder.hpp"

#include <fmt/format.h>

#include <charconv>
#include <string>
#include <string_view>

namespace dapprof::protocol {
namespace {

constexpr std::uint64_t kMaxSafeInteger = (std::uint64_t{1} << 53) - 1;

Error bad(std::string message) {
  return Error{"profilingData: " + std::move(message), ErrorCode::InvalidArgument};
}

// An object key holding an ID: canonical decimal (no sign, no leading zero) up to 2^53 - 1.
std::optional<std::uint64_t> parse_id_key(std::string_view key) {
  if (key.empty() || (key.size() > 1 && key.front() == '0')) return std::nullopt;
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(key.data(), key.data() + key.size(), value);
  if (ec != std::errc{} || ptr != key.data() + key.size() || value > kMaxSafeInteger)
    return std::nullopt;
  return value;
}

// A non-negative integer, whichever way the JSON library stored it (parsed text gives unsigned,
// values built in C++ may be signed).
std::optional<std::uint64_t> non_negative(const Json& value) {
  if (value.is_number_unsigned()) return value.get<std::uint64_t>();
  if (value.is_number_integer() && value.get<std::int64_t>() >= 0)
    return static_cast<std::uint64_t>(value.get<std::int64_t>());
  return std::nullopt;
}

std::optional<std::uint64_t> as_id(const Json& value) {
  const auto id = non_negative(value);
  if (!id || *id > kMaxSafeInteger) return std::nullopt;
  return id;
}

std::optional<std::uint64_t> optional_count(const Json& body, const char* key, Error& error) {
  const auto it = body.find(key);
  if (it == body.end()) return 0;
  const auto count = non_negative(*it);
  if (!count) error = bad(fmt::format("'{}' must be a non-negative integer", key));
  return count;
}

Result<model::Frame> parse_frame(const std::string& key, const Json& value) {
  if (!value.is_object()) return bad(fmt::format("newFrames[\"{}\"] must be an object", key));
  const auto file = value.find("file"), line = value.find("line"),
             function = value.find("function");
  if (file == value.end() || !file->is_string() || function == value.end() ||
      !function->is_string() || line == value.end() || !line->is_number_integer() ||
      line->get<std::int64_t>() < 0 || line->get<std::int64_t>() > INT32_MAX)
    return bad(fmt::format(
        "newFrames[\"{}\"] needs string 'file', string 'function' and non-negative 'line'", key));
  model::Frame frame;
  frame.function = function->get<std::string>();
  frame.file = file->get<std::string>();
  frame.line = line->get<int>();
  if (const auto native = value.find("native"); native != value.end()) {
    if (!native->is_boolean())
      return bad(fmt::format("newFrames[\"{}\"].native must be a boolean", key));
    if (native->get<bool>()) frame.kind = model::FrameKind::Native;
  }
  if (const auto task = value.find("task"); task != value.end()) {
    const auto state = task->is_string() ? model::task_state_named(task->get<std::string>())
                                         : std::optional<model::TaskState>{};
    if (!state)
      return bad(
          fmt::format("newFrames[\"{}\"].task must be \"running\", \"waiting\", \"cancelling\" or "
                      "\"unknown\"",
                      key));
    frame.kind = model::FrameKind::Task;
    frame.task_state = *state;
  }
  if (const auto exception = value.find("exception"); exception != value.end()) {
    if (!exception->is_boolean())
      return bad(fmt::format("newFrames[\"{}\"].exception must be a boolean", key));
    if (exception->get<bool>()) frame.kind = model::FrameKind::Exception;
  }
  if (const auto gc = value.find("gc"); gc != value.end()) {
    if (!gc->is_boolean()) return bad(fmt::format("newFrames[\"{}\"].gc must be a boolean", key));
    if (gc->get<bool>()) frame.kind = model::FrameKind::Gc;
  }
  if (const auto module = value.find("module"); module != value.end()) {
    if (!module->is_string())
      return bad(fmt::format("newFrames[\"{}\"].module must be a string", key));
    frame.module = module->get<std::string>();
  }
  if (const auto origin = value.find("origin"); origin != value.end()) {
    if (*origin == "debugger")
      frame.origin = model::FrameOrigin::Debugger;
    else if (*origin != "program")
      return bad(fmt::format("newFrames[\"{}\"].origin must be \"program\" or \"debugger\"", key));
  }
  return frame;
}

Result<model::ThreadInfo> parse_thread(const std::string& key, std::uint64_t id,
                                       const Json& value) {
  if (!value.is_object()) return bad(fmt::format("threads[\"{}\"] must be an object", key));
  model::ThreadInfo info;
  info.os_thread_id = id;
  const auto name = value.find("name");
  if (name == value.end() || !name->is_string())
    return bad(fmt::format("threads[\"{}\"].name must be a string", key));
  info.name = name->get<std::string>();
  const auto os = value.find("osThreadId");
  if (os == value.end() || non_negative(*os) != id)
    return bad(fmt::format("threads[\"{}\"].osThreadId must equal the key", key));
  if (const auto pid = value.find("pid"); pid != value.end()) {
    const auto number = non_negative(*pid);
    if (!number || *number > INT32_MAX)
      return bad(fmt::format("threads[\"{}\"].pid must be a process id", key));
    info.pid = pid->get<pid_t>();
  }
  if (const auto ident = value.find("pythonThreadId"); ident != value.end()) {
    const auto text = ident->is_string() ? ident->get<std::string>() : std::string{};
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), info.thread_id);
    if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size())
      return bad(fmt::format("threads[\"{}\"].pythonThreadId must be a decimal string", key));
  }
  return info;
}

}  // namespace

Result<std::vector<DecodedSample>> StreamDecoder::decode(const Json& body) {
  if (!body.is_object()) return bad("the event body must be an object");
  const auto new_frames = body.find("newFrames");
  const auto samples = body.find("samples");
  const auto sample_count = body.find("sampleCount");
  const auto duration = body.find("duration");
  if (new_frames == body.end() || !new_frames->is_object())
    return bad("'newFrames' must be an object");
  if (samples == body.end() || !samples->is_array()) return bad("'samples' must be an array");
  const auto stack_ids = body.find("stackIds");
  const bool runs = stack_ids != body.end();
  const auto stack_counts = body.find("stackCounts");
  if (runs) {
    if (!stack_ids->is_array()) return bad("'stackIds' must be an array");
    if (stack_counts == body.end() || !stack_counts->is_array() ||
        stack_counts->size() != stack_ids->size())
      return bad("'stackCounts' must be an array as long as 'stackIds'");
    if (!samples->empty()) return bad("'samples' must be empty when 'stackIds' carries them");
  }
  std::uint64_t total = samples->size();
  if (runs) {
    for (std::size_t i = 0; i < stack_counts->size(); ++i) {
      const auto count = non_negative((*stack_counts)[i]);
      if (!count || *count == 0 || *count > kMaxSafeInteger - total)
        return bad(fmt::format("stackCounts[{}] must be a positive integer", i));
      total += *count;
    }
  }
  if (sample_count == body.end() || non_negative(*sample_count) != total)
    return bad(fmt::format("'sampleCount' must equal the number of samples ({})", total));
  if (duration == body.end() || !duration->is_number() || duration->get<double>() < 0)
    return bad("'duration' must be a non-negative number of milliseconds");

  // Parse into locals first so that a rejected body leaves the decoder unchanged.
  std::unordered_map<FrameId, model::Frame> added;
  for (const auto& [key, value] : new_frames->items()) {
    const auto id = parse_id_key(key);
    if (!id) return bad(fmt::format("frame ID '{}' is not a decimal integer below 2^53", key));
    if (frames_.contains(*id) || added.contains(*id))
      return bad(fmt::format("frame ID {} is defined twice", *id));
    auto frame = parse_frame(key, value);
    if (!frame) return frame.error();
    added.emplace(*id, std::move(*frame));
  }

  std::unordered_map<ThreadId, model::ThreadInfo> thread_defs;
  if (const auto threads = body.find("threads"); threads != body.end()) {
    if (!threads->is_object()) return bad("'threads' must be an object");
    for (const auto& [key, value] : threads->items()) {
      const auto id = parse_id_key(key);
      if (!id) return bad(fmt::format("thread ID '{}' is not a decimal integer below 2^53", key));
      auto info = parse_thread(key, *id, value);
      if (!info) return info.error();
      thread_defs.insert_or_assign(*id, std::move(*info));
    }
  }
  auto find_thread = [&](ThreadId id) -> const model::ThreadInfo* {
    if (const auto it = thread_defs.find(id); it != thread_defs.end()) return &it->second;
    if (const auto it = threads_.find(id); it != threads_.end()) return &it->second;
    return nullptr;
  };

  const Json* thread_ids = nullptr;
  if (const auto it = body.find("threadIds"); it != body.end()) {
    if (!it->is_array() || it->size() != (runs ? stack_ids->size() : samples->size()))
      return bad(runs ? "'threadIds' must be an array as long as 'stackIds'"
                      : "'threadIds' must be an array as long as 'samples'");
    thread_ids = &*it;
  }

  Error count_error;
  const auto dropped = optional_count(body, "droppedSampleCount", count_error);
  const auto errors = optional_count(body, "errorCount", count_error);
  if (!dropped || !errors) return count_error;

  auto find_frame = [&](FrameId id) -> const model::Frame* {
    if (const auto it = added.find(id); it != added.end()) return &it->second;
    if (const auto it = frames_.find(id); it != frames_.end()) return &it->second;
    return nullptr;
  };

  std::unordered_map<StackId, std::vector<FrameId>> added_stacks;
  if (const auto new_stacks = body.find("newStacks"); new_stacks != body.end()) {
    if (!new_stacks->is_object()) return bad("'newStacks' must be an object");
    for (const auto& [key, value] : new_stacks->items()) {
      const auto id = parse_id_key(key);
      if (!id) return bad(fmt::format("stack ID '{}' is not a decimal integer below 2^53", key));
      if (stacks_.contains(*id) || added_stacks.contains(*id))
        return bad(fmt::format("stack ID {} is defined twice", *id));
      if (!value.is_array())
        return bad(fmt::format("newStacks[\"{}\"] must be an array of frame IDs", key));
      std::vector<FrameId> stack;
      stack.reserve(value.size());
      for (const Json& item : value) {
        const auto frame = as_id(item);
        if (!frame || !find_frame(*frame))
          return bad(fmt::format("newStacks[\"{}\"] holds {}, which no event defined as a frame",
                                 key, item.dump()));
        stack.push_back(*frame);
      }
      added_stacks.emplace(*id, std::move(stack));
    }
  }
  auto find_stack = [&](StackId id) -> const std::vector<FrameId>* {
    if (const auto it = added_stacks.find(id); it != added_stacks.end()) return &it->second;
    if (const auto it = stacks_.find(id); it != stacks_.end()) return &it->second;
    return nullptr;
  };
  auto thread_of = [&](std::size_t i, DecodedSample& sample) -> Status {
    if (!thread_ids) return Ok{};
    const auto id = as_id((*thread_ids)[i]);
    const auto* thread = id ? find_thread(*id) : nullptr;
    if (!thread)
      return bad(fmt::format("threadIds[{}] is {}, which no event defined in 'threads'", i,
                             (*thread_ids)[i].dump()));
    sample.thread = *thread;
    return Ok{};
  };

  std::vector<DecodedSample> out;
  out.reserve(runs ? stack_ids->size() : samples->size());
  for (std::size_t i = 0; runs && i < stack_ids->size(); ++i) {
    const auto id = as_id((*stack_ids)[i]);
    const auto* stack = id ? find_stack(*id) : nullptr;
    if (!stack)
      return bad(fmt::format("stackIds[{}] is {}, which no event defined in 'newStacks'", i,
                             (*stack_ids)[i].dump()));
    DecodedSample sample;
    sample.count = non_negative((*stack_counts)[i]).value_or(1);
    sample.stack.reserve(stack->size());
    for (const FrameId frame : *stack) sample.stack.push_back(*find_frame(frame));
    if (auto status = thread_of(i, sample); !status) return status.error();
    out.push_back(std::move(sample));
  }
  for (std::size_t i = 0; i < samples->size(); ++i) {
    const Json& stack = (*samples)[i];
    if (!stack.is_array()) return bad(fmt::format("samples[{}] must be an array of frame IDs", i));
    DecodedSample sample;
    sample.stack.reserve(stack.size());
    for (const Json& value : stack) {
      const auto id = as_id(value);
      if (!id)
        return bad(fmt::format("samples[{}] holds {}, not a frame ID (an integer from 0 to 2^53-1)",
                               i, value.dump()));
      const auto* frame = find_frame(*id);
      if (!frame)
        return bad(
            fmt::format("samples[{}] refers to frame ID {}, which no event defined", i, *id));
      sample.stack.push_back(*frame);
    }
    if (auto status = thread_of(i, sample); !status) return status.error();
    out.push_back(std::move(sample));
  }

  frames_.merge(added);
  stacks_.merge(added_stacks);
  for (auto& [id, info] : thread_defs) threads_.insert_or_assign(id, std::move(info));
  ++events_;
  samples_ += total;
  dropped_ += *dropped;
  errors_ += *errors;
  duration_ms_ += duration->get<double>();
  return out;
}

}  // namespace dapprof::protocol
