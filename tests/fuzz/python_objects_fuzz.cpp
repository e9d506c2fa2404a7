// The readers of a CPython target's memory (thread states, frame chains, code objects, str,
// bytes, int, dicts, instance attributes, local variables, line tables, _Py_DebugOffsets) on an
// address space the fuzzer makes up: a running target's memory changes under the reader, so
// whatever bytes a pointer leads to must end in a value or an error, never a crash, a hang (a
// cyclic frame chain ends) or an absurd allocation (a length of 2^40 is refused, not allocated).
//
// Input: a Header, then up to kRegions regions, each a 32-bit size and its bytes, region k mapped
// at kBase + k * kStride. The header picks the version layout (the generated table, or, 3.13+,
// the _Py_DebugOffsets in region 0), what to read, and from where.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "sampler/process/sample_reads.hpp"
#include "sampler/python/code_cache.hpp"
#include "sampler/python/layout.hpp"
#include "sampler/python/layouts_generated.hpp"
#include "sampler/python/line_table.hpp"
#include "sampler/python/locals.hpp"
#include "sampler/python/objects.hpp"
#include "sampler/python/stack_walk.hpp"
#include "sampler/python/thread_names.hpp"
#include "support/address_space.hpp"

namespace {

namespace py = dapprof::sampler::python;
using dapprof::sampler::process::Address;
using dapprof::sampler::process::ProcessMemory;
using dapprof::sampler::process::SampleReads;

constexpr Address kBase = 0x100000;
constexpr Address kStride = 0x100000;
constexpr std::size_t kRegions = 8;

enum class Mode : std::uint8_t { Threads, Frames, Object, LineTables, DebugOffsets, kCount };

struct Header {
  std::uint8_t version;  // index into the generated layouts
  std::uint8_t mode;     // Mode
  std::uint8_t flags;    // bit 0: nonblocking; bits 1-2: LineNumbers
  std::uint8_t unused[5];
  Address start;   // thread list head, top frame or object
  Address interp;  // the interpreter state (Threads); first line (LineTables)
  Address types[5];
};

// Every reader a stack of frames leads to: locals of each frame, their values.
void read_locals(const py::Objects& objects, const std::vector<py::StackWalker::FrameAt>& where) {
  const py::LocalsReader locals(objects);
  for (const auto& at : where) {
    if (auto vars = locals.read(at.frame, at.code)) {
      for (const auto& var : *vars) {
        if (var.name.size() > (1u << 20)) __builtin_trap();  // names are bounded
      }
    }
  }
}

// Two samples of each stack, the second served from the bytes the first one planned, as the
// sampler takes them.
void walk_stacks(const py::Objects& objects, const ProcessMemory& memory, SampleReads& reads,
                 const Header& h, std::span<const Address> tops) {
  py::CodeCache codes(objects);
  py::StackWalker walker(objects, codes, h.flags & 1,
                         static_cast<dapprof::sampler::LineNumbers>((h.flags >> 1) % 3));
  for (int sample = 0; sample < 2; ++sample) {
    reads.begin(memory);
    for (const Address top : tops) {
      std::vector<std::uint32_t> groups;
      std::vector<Address> entries;
      std::vector<py::StackWalker::FrameAt> where;
      auto frames = walker.walk(top, &groups, &entries, &where);
      if (!frames) continue;
      if (frames->size() > py::kMaxFrames || where.size() != frames->size()) __builtin_trap();
      if (sample == 0) read_locals(objects, where);
    }
    reads.end();
  }
}

void read_object(const py::Objects& objects, Address at) {
  (void)objects.type_of(at);
  (void)objects.str(at);
  std::size_t length = 0;
  (void)objects.str(at, 48, &length);
  (void)objects.bytes(at);
  (void)objects.unsigned_int(at);
  (void)objects.dict_items(at);
  (void)objects.dict_lookup(at, "threading");
  (void)objects.instance_attribute(at, "_name");
  (void)py::LocalsReader(objects).describe(at);
}

void read_line_tables(std::span<const std::byte> table, int first_line) {
  const std::span bytes(reinterpret_cast<const std::uint8_t*>(table.data()), table.size());
  // Some 64 offsets over the code the table may cover (each lookup decodes from the start).
  const auto end = static_cast<std::int64_t>(8 * bytes.size() + 4);
  const std::int64_t step = std::max<std::int64_t>(2, end / 64 & ~std::int64_t{1});
  for (const auto format : {py::LineTableFormat::Lnotab, py::LineTableFormat::Linetable310,
                            py::LineTableFormat::Locations311}) {
    for (std::int64_t offset = -2; offset < end; offset += step)
      (void)py::line_for_offset(format, bytes, first_line, offset);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Header h{};
  if (size < sizeof h) return 0;
  std::memcpy(&h, data, sizeof h);
  std::span<const std::byte> rest(reinterpret_cast<const std::byte*>(data) + sizeof h,
                                  size - sizeof h);
  dapprof::fake::AddressSpace space;
  std::vector<std::span<const std::byte>> regions;
  while (rest.size() >= 4 && regions.size() < kRegions) {
    std::uint32_t n = 0;
    std::memcpy(&n, rest.data(), 4);
    rest = rest.subspan(4);
    const auto bytes = rest.first(std::min<std::size_t>({n, rest.size(), kStride}));
    rest = rest.subspan(bytes.size());
    space.map(kBase + regions.size() * kStride, bytes);
    regions.push_back(bytes);
  }

  const auto layouts = py::generated_layouts();
  const auto& generated = layouts[h.version % layouts.size()];
  auto mode = static_cast<Mode>(h.mode % static_cast<std::uint8_t>(Mode::kCount));
  if (mode == Mode::LineTables) {
    if (!regions.empty()) read_line_tables(regions[0], static_cast<int>(h.interp));
    return 0;
  }
  // The layout of a 3.13+ target comes from its own memory (region 0 here), then the thread
  // states are walked with it: its offsets are as hostile as the rest.
  auto layout = py::layout_for(generated.major, generated.minor);
  if (mode == Mode::DebugOffsets) {
    if (!py::has_debug_offsets(generated.major, generated.minor) || regions.empty()) return 0;
    layout = py::layout_from_debug_offsets(generated.major, generated.minor, regions[0]);
    mode = Mode::Threads;
  }
  if (!layout) return 0;
  const py::TypeAddresses types{h.types[0], h.types[1], h.types[2], h.types[3], h.types[4]};
  ProcessMemory memory(1, space);
  SampleReads reads;
  memory.use(&reads);
  const py::Objects objects(memory, *layout, types);
  switch (mode) {
    case Mode::Threads: {
      py::CodeCache codes(objects);
      const py::StackWalker walker(objects, codes, true);
      auto threads = walker.threads(h.interp, h.start);
      if (!threads) break;
      if (threads->size() > py::kMaxThreads) __builtin_trap();
      std::vector<Address> tops;
      std::vector<std::uint64_t> ids;
      for (const auto& t : *threads) {
        tops.push_back(t.top_frame);
        ids.push_back(t.thread_id);
      }
      walk_stacks(objects, memory, reads, h, tops);
      py::ThreadNames names(objects);
      names.update(h.interp, ids);
      for (const auto id : ids) (void)names.name(id);
      break;
    }
    case Mode::Frames:
      walk_stacks(objects, memory, reads, h, std::array{h.start});
      break;
    case Mode::Object:
      read_object(objects, h.start);
      break;
    default:
      break;
  }
  return 0;
}
