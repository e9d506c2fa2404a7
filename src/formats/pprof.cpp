// pprof's profile.proto (github.com/google/pprof/proto), gzipped as pprof expects its files. The
// message is built with the classes protoc generated from pprof's own .proto, so the encoding is
// protobuf's, not ours.
#include <fmt/format.h>
#include <zlib.h>

#include <cmath>
#include <deque>
#include <map>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "formats/instructions.hpp"
#include "formats/writers.hpp"
#include "profile.pb.h"

namespace dapprof::formats {
namespace {

namespace pb = perftools::profiles;

// The string table: every string once, "" at index 0 as the format requires.
class Strings {
 public:
  explicit Strings(pb::Profile& message) : message_(message) { index(""); }
  std::int64_t index(std::string_view s) {
    const auto [it, added] =
        indices_.try_emplace(std::string(s), static_cast<std::int64_t>(indices_.size()));
    if (added) message_.add_string_table(it->first);
    return it->second;
  }

 private:
  pb::Profile& message_;
  std::unordered_map<std::string, std::int64_t> indices_;
};

// gzip (not zlib's own framing): what pprof, Pyroscope and `go tool pprof` read.
bool gzip(const std::string& bytes, std::ostream& out) {
  z_stream z{};
  // windowBits 15 + 16 selects the gzip wrapper.
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    return false;
  std::string compressed(deflateBound(&z, static_cast<uLong>(bytes.size())), '\0');
  // zlib's API is C: it takes non-const bytes it does not write to.
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(compressed.data());
  z.avail_out = static_cast<uInt>(compressed.size());
  const int status = deflate(&z, Z_FINISH);
  const auto written = z.total_out;
  deflateEnd(&z);
  if (status != Z_STREAM_END) return false;
  out.write(compressed.data(), static_cast<std::streamsize>(written));
  return true;
}

}  // namespace

void write_pprof(const Profile& profile, std::ostream& out, const WriteOptions&) {
  pb::Profile message;
  Strings strings(message);

  // Two values per sample, as pprof's own CPU profiles have: how many samples, and the CPU time
  // they stand for (samples × interval), so that `pprof -top` shows either.
  const std::int64_t interval_ns = profile.interval_us * 1000;
  auto* count_type = message.add_sample_type();
  count_type->set_type(strings.index("samples"));
  count_type->set_unit(strings.index("count"));
  auto* cpu_type = message.add_sample_type();
  cpu_type->set_type(strings.index("cpu"));
  cpu_type->set_unit(strings.index("nanoseconds"));
  message.mutable_period_type()->set_type(strings.index("cpu"));
  message.mutable_period_type()->set_unit(strings.index("nanoseconds"));
  message.set_period(interval_ns);
  message.set_time_nanos(profile.start_unix_ns);
  message.set_duration_nanos(profile.end_us() * 1000);
  message.add_comment(strings.index(fmt::format("dapprof: {}", profile.name)));

  // A function is (name, file, start line); a location is one frame of the profile (a function
  // at a line), numbered from 1 as ids must be non-zero.
  using FunctionKey = std::tuple<std::string_view, std::string_view, int>;
  std::map<FunctionKey, std::uint64_t> function_ids;
  std::deque<std::string> places;  // what the keys' file views (stable addresses)
  for (std::size_t i = 0; i < profile.frames().size(); ++i) {
    const auto& f = profile.frames()[i];
    // A native frame without line tables is still placed: in its shared object; a task frame
    // in "<task>".
    const std::string_view file = places.emplace_back(model::frame_place(f));
    // The key views the frame's own strings (a deduced std::tuple would copy the name into a
    // temporary, and the map would keep a view of it).
    const auto [it, added] = function_ids.try_emplace(FunctionKey(f.function, file, f.first_line),
                                                      function_ids.size() + 1);
    if (added) {
      auto* function = message.add_function();
      function->set_id(it->second);
      function->set_name(strings.index(f.function));
      // No system_name: the frames have no mangled name, and pprof "demangles" a function whose
      // system_name is its name, which turns "<module>" (C++ template brackets, to it) into "".
      function->set_filename(strings.index(file));
      function->set_start_line(f.first_line);
    }
    auto* location = message.add_location();
    location->set_id(i + 1);
    auto* line = location->add_line();
    line->set_function_id(it->second);
    line->set_line(f.line);
  }

  // pprof has no timeline: the samples of one thread with one stack are one sample, their count
  // its value. Labels say which thread and process, as the Go runtime's own labels do.
  std::map<std::pair<std::uint32_t, std::uint32_t>, double> weights;  // (thread, stack)
  for (const auto& s : profile.samples()) weights[{s.thread, s.stack}] += s.weight;
  const auto thread_key = strings.index("thread");
  const auto tid_key = strings.index("tid");
  const auto pid_key = strings.index("pid");
  const auto task_key = strings.index("task");
  const auto opcode_key = strings.index("opcode");
  const auto base_opcode_key = strings.index("base_opcode");
  const auto offset_key = strings.index("offset");
  const auto column_key = strings.index("column");
  // With processes shown, a `process` label (its command line) as well: `-tagfocus process=...`.
  const bool processes = profile.process_level();
  const auto process_key = processes ? strings.index("process") : 0;
  for (const auto& [key, weight] : weights) {
    const auto& [thread_index, stack_index] = key;
    const auto& thread = profile.threads()[thread_index];
    auto* sample = message.add_sample();
    // Innermost first, as pprof lists a sample's locations.
    for (const auto frame : profile.stacks()[stack_index]) sample->add_location_id(frame + 1);
    const auto count = std::llround(weight);
    sample->add_value(count);
    sample->add_value(std::llround(weight * static_cast<double>(interval_ns)));
    auto* name = sample->add_label();
    name->set_key(thread_key);
    name->set_str(strings.index(thread.name.empty() ? fmt::format("thread 0x{:x}", thread.thread_id)
                                                    : thread.name));
    auto* tid = sample->add_label();
    tid->set_key(tid_key);
    tid->set_num(static_cast<std::int64_t>(thread.os_thread_id));
    auto* pid = sample->add_label();
    pid->set_key(pid_key);
    pid->set_num(thread.pid);
    if (processes) {
      const auto process = profile.process(thread.pid);
      auto* label = sample->add_label();
      label->set_key(process_key);
      label->set_str(strings.index(process.command_line.empty()
                                       ? fmt::format("process {}", thread.pid)
                                       : process.command_line));
    }
    // With async sampling, the task the sample is of (its innermost task frame), as a label
    // that `pprof -tagfocus task=...` selects by.
    for (const auto frame : profile.stacks()[stack_index]) {
      const auto& f = profile.frames()[frame];
      if (!f.task()) continue;
      auto* task = sample->add_label();
      task->set_key(task_key);
      task->set_str(strings.index(f.function));
      break;
    }
    // With --opcodes, the instruction of the innermost frame that has one (pprof has a place for
    // neither instructions nor columns in a location): `pprof -tags` shows the mix,
    // `-tagfocus opcode=BINARY_OP_MULTIPLY_INT` selects by it.
    for (const auto frame : profile.stacks()[stack_index]) {
      const auto& i = profile.frames()[frame].instruction;
      if (!i) continue;
      const auto label = [&](std::int64_t label_key) {
        auto* l = sample->add_label();
        l->set_key(label_key);
        return l;
      };
      label(opcode_key)->set_str(strings.index(instruction_name(*i)));
      label(base_opcode_key)->set_str(strings.index(std::string(i->base_name)));
      auto* offset = label(offset_key);
      offset->set_num(i->offset);
      offset->set_num_unit(strings.index("bytes"));
      if (i->has_columns()) label(column_key)->set_num(i->column);
      break;
    }
  }

  std::string bytes;
  if (!message.SerializeToString(&bytes) || !gzip(bytes, out)) out.setstate(std::ios::badbit);
}

}  // namespace dapprof::formats
