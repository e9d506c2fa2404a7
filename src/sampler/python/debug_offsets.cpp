// 3.13+: the layout from the target's own _Py_DebugOffsets. The struct's shape (where each offset
// sits in it) is fixed per minor version and measured by the layout generator ("debug.*" fields
// of each table); the values are the target's, so a new patch release needs no new dapprof.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string_view>

#include "sampler/python/layout.hpp"
#include "sampler/python/layouts_generated.hpp"

namespace dapprof::sampler::python {
namespace {

// The first version that publishes _Py_DebugOffsets.
constexpr int kFirstDebugOffsetsMinor = 13;
constexpr std::string_view kCookie = "xdebugpy";
constexpr std::uint64_t kMaxStructSize = 1u << 20;

// _Py_DebugOffsets field (e.g. "thread_state.next") -> Layout member. A field a version lacks
// (tp_basicsize before 3.15) leaves the table's value in place.
constexpr FieldBinding kDebugBindings[] = {
    {"runtime_state.interpreters_head", &Layout::runtime_interpreters_head},
    {"interpreter_state.next", &Layout::interp_next},
    {"interpreter_state.threads_head", &Layout::interp_threads_head},
    {"interpreter_state.imports_modules", &Layout::interp_modules},
    {"interpreter_state.ceval_gil", &Layout::interp_ceval_gil},
    {"thread_state.size", &Layout::tstate_size},
    {"thread_state.next", &Layout::tstate_next},
    {"thread_state.interp", &Layout::tstate_interp},
    {"thread_state.current_frame", &Layout::tstate_current_frame},
    {"thread_state.thread_id", &Layout::tstate_thread_id},
    {"thread_state.native_thread_id", &Layout::tstate_native_thread_id},
    // Only the frame's header is read: up to its locals.
    {"interpreter_frame.localsplus", &Layout::frame_size},
    {"interpreter_frame.previous", &Layout::frame_previous},
    {"interpreter_frame.executable", &Layout::frame_code},
    {"interpreter_frame.instr_ptr", &Layout::frame_instr},
    {"interpreter_frame.owner", &Layout::frame_owner},
    {"code_object.size", &Layout::code_size},
    {"code_object.filename", &Layout::code_filename},
    {"code_object.name", &Layout::code_name},
    {"code_object.qualname", &Layout::code_qualname},
    {"code_object.linetable", &Layout::code_linetable},
    {"code_object.firstlineno", &Layout::code_firstlineno},
    {"code_object.co_code_adaptive", &Layout::code_code_adaptive},
    {"pyobject.ob_type", &Layout::object_type},
    {"type_object.tp_flags", &Layout::type_flags},
    {"type_object.tp_basicsize", &Layout::type_basicsize},
    {"type_object.tp_dictoffset", &Layout::type_dictoffset},
    {"heap_type_object.ht_cached_keys", &Layout::heaptype_cached_keys},
    {"dict_object.ma_keys", &Layout::dict_keys},
    {"dict_object.ma_values", &Layout::dict_values},
    {"long_object.lv_tag", &Layout::long_size},
    {"long_object.ob_digit", &Layout::long_digit},
    {"bytes_object.ob_size", &Layout::bytes_size},
    {"bytes_object.ob_sval", &Layout::bytes_sval},
    {"unicode_object.state", &Layout::unicode_state},
    {"unicode_object.length", &Layout::unicode_length},
    {"unicode_object.asciiobject_size", &Layout::unicode_ascii_size},
    {"unicode_object.compactunicodeobject_size", &Layout::unicode_compact_size},
    {"gen_object.size", &Layout::gen_size},
    {"gen_object.gi_iframe", &Layout::gen_iframe},
    {"gen_object.gi_frame_state", &Layout::gen_frame_state},
    {"interpreter_frame.stackpointer", &Layout::frame_stackpointer},
    {"set_object.used", &Layout::set_used},
    {"set_object.mask", &Layout::set_mask},
    {"set_object.table", &Layout::set_table},
};

const GeneratedLayout* table_for(int major, int minor) {
  for (const auto& t : generated_layouts()) {
    if (t.major == major && t.minor == minor) return &t;
  }
  return nullptr;
}

// Where `field` sits inside _Py_DebugOffsets in the table's version; nullopt if it lacks it.
std::optional<std::uint64_t> position(const GeneratedLayout& table, std::string_view field) {
  for (const auto& f : table.fields) {
    if (f.name.size() == field.size() + 6 && f.name.starts_with("debug.") &&
        f.name.substr(6) == field)
      return f.value;
  }
  return std::nullopt;
}

class DebugOffsets {
 public:
  DebugOffsets(std::span<const std::byte> bytes, const GeneratedLayout& shape)
      : bytes_(bytes), shape_(shape) {}

  // The word at the position `field` has in this shape; nullopt if the shape lacks the field or
  // the copy is too short.
  std::optional<std::uint64_t> word(std::string_view field) const {
    const auto at = position(shape_, field);
    if (!at || *at + 8 > bytes_.size()) return std::nullopt;
    std::uint64_t v;
    std::memcpy(&v, bytes_.data() + *at, 8);
    return v;
  }

  // Offsets every CPython 3.13+ build (64-bit, GIL) has, each read from a different part of the
  // struct: with the shape of another minor (fields added or moved), some land elsewhere.
  bool anchors_hold() const {
    const auto is = [&](std::string_view field, std::uint64_t want) { return word(field) == want; };
    return is("pyobject.ob_type", 8) && is("unicode_object.length", 16) &&
           is("long_object.lv_tag", 16) && is("bytes_object.ob_size", 16) &&
           is("bytes_object.ob_sval", 32) && is("dict_object.ma_keys", 32) &&
           is("thread_state.next", 8) && is("interpreter_frame.previous", 8);
  }

 private:
  std::span<const std::byte> bytes_;
  const GeneratedLayout& shape_;
};

// Field offsets must lie inside their structs; anything else means a misread (or a hostile
// target). The readers copy a struct whole and take these fields from the copy unchecked, so
// every field they read so must be checked here. No sum overflows: apply() bounds each offset.
Status check_plausible(const Layout& l) {
  const auto in = [](std::uint64_t field, std::uint64_t size, std::uint64_t struct_size) {
    return field + size <= struct_size;
  };
  const bool tstate =
      in(l.tstate_next, 8, l.tstate_size) && in(l.tstate_interp, 8, l.tstate_size) &&
      in(l.tstate_current_frame, 8, l.tstate_size) && in(l.tstate_thread_id, 8, l.tstate_size) &&
      in(l.tstate_native_thread_id, 8, l.tstate_size);
  const bool frame = in(l.frame_previous, 8, l.frame_size) && in(l.frame_code, 8, l.frame_size) &&
                     in(l.frame_instr, 8, l.frame_size) && in(l.frame_owner, 1, l.frame_size);
  const bool code = in(l.code_linetable, 8, l.code_size) && in(l.code_qualname, 8, l.code_size) &&
                    in(l.code_code_adaptive, 0, l.code_size);
  const bool str = in(l.unicode_length, 8, l.unicode_ascii_size) &&
                   in(l.unicode_state, 4, l.unicode_ascii_size) &&
                   in(l.unicode_ascii_size, 0, l.unicode_compact_size);
  if (tstate && frame && code && str) return Ok{};
  return Error{"_Py_DebugOffsets holds implausible offsets", ErrorCode::UnsupportedVersion};
}

Result<Layout> apply(const DebugOffsets& debug, const GeneratedLayout& base) {
  auto layout = layout_for(base.major, base.minor);
  if (!layout) return layout.error();
  const Layout table = *layout;
  // Each offset the target gives lies in a struct of reasonable size: the readers size their
  // copies of structs from these, and sum them.
  for (const auto& b : kDebugBindings) {
    const auto v = debug.word(b.name);
    if (!v) continue;
    if (*v >= kMaxStructSize) {
      return Error{fmt::format("_Py_DebugOffsets holds an implausible {}", b.name),
                   ErrorCode::UnsupportedVersion};
    }
    (*layout).*(b.member) = *v;
  }
  // The GIL's fields, as offsets inside struct _gil_runtime_state rather than the interpreter.
  const auto gil = debug.word("interpreter_state.gil_runtime_state");
  const auto locked = debug.word("interpreter_state.gil_runtime_state_locked");
  const auto holder = debug.word("interpreter_state.gil_runtime_state_holder");
  if (!gil || !locked || !holder || *locked < *gil || *holder < *gil) {
    return Error{"_Py_DebugOffsets holds implausible GIL offsets", ErrorCode::UnsupportedVersion};
  }
  layout->gil_locked = *locked - *gil;
  layout->gil_last_holder = *holder - *gil;
  // The collector's flag: its struct's place in the interpreter plus the flag's place in it.
  // Without them (or implausible) the table's value stays.
  const auto gc = debug.word("interpreter_state.gc");
  const auto collecting = debug.word("gc.collecting");
  if (gc && collecting && *gc + *collecting < kMaxStructSize)
    layout->interp_gc_collecting = *gc + *collecting;
  if (auto s = check_plausible(*layout); !s) return s.error();
  // The generated table is a cross-check: a difference is worth a line in a debug log (the
  // target's own offsets win), not a refusal.
  for (const auto& b : kDebugBindings) {
    if (table.*(b.member) != kAbsent && table.*(b.member) != (*layout).*(b.member)) {
      spdlog::debug("Python {}.{}: {} is {} in the target's _Py_DebugOffsets, {} in the table",
                    base.major, base.minor, b.name, (*layout).*(b.member), table.*(b.member));
    }
  }
  return layout;
}

// Whether the monitoring data's `lines` of a target of this full version (PY_VERSION_HEX) start
// with their entry size: changed in 3.13.3 (the O(1) line lookup of CPython issue 127953).
bool lines_sized(std::uint64_t version) { return (version >> 8) >= 0x030D03; }

}  // namespace

bool has_debug_offsets(int major, int minor) {
  return major == 3 && minor >= kFirstDebugOffsetsMinor;
}

Result<Layout> layout_from_debug_offsets(int major, int minor, std::span<const std::byte> bytes) {
  if (bytes.size() < 24 || std::memcmp(bytes.data(), kCookie.data(), kCookie.size()) != 0) {
    return Error{"_PyRuntime does not start with the _Py_DebugOffsets cookie \"xdebugpy\"",
                 ErrorCode::NotPython};
  }
  std::uint64_t version = 0, free_threaded = 0;
  std::memcpy(&version, bytes.data() + 8, 8);
  std::memcpy(&free_threaded, bytes.data() + 16, 8);
  const int struct_major = static_cast<int>((version >> 24) & 0xff);
  const int struct_minor = static_cast<int>((version >> 16) & 0xff);
  if (struct_major != major || struct_minor != minor) {
    return Error{fmt::format("the _Py_DebugOffsets of this Python {}.{} say version {:#x}", major,
                             minor, version),
                 ErrorCode::UnsupportedVersion};
  }
  if (free_threaded != 0) {
    return Error{fmt::format("this is a free-threaded build of Python {}.{} (Py_GIL_DISABLED, "
                             "e.g. python{}.{}t), which dapprof does not read: its objects, "
                             "frames and thread states are laid out differently; profile the "
                             "program with the default (GIL) build of the same version",
                             major, minor, major, minor),
                 ErrorCode::UnsupportedVersion};
  }
  if (!has_debug_offsets(major, minor)) {
    return Error{fmt::format("Python {}.{} has no _Py_DebugOffsets", major, minor),
                 ErrorCode::UnsupportedVersion};
  }
  if (const GeneratedLayout* table = table_for(major, minor)) {
    warn_if_foreign(*table);
    const DebugOffsets debug(bytes, *table);
    if (!debug.anchors_hold()) {
      return Error{fmt::format("the _Py_DebugOffsets of this Python {}.{} do not have the shape "
                               "of {}.{}'s (measured on {})",
                               major, minor, major, minor, table->measured_on),
                   ErrorCode::UnsupportedVersion};
    }
    auto layout = apply(debug, *table);
    if (layout) layout->monitoring_lines_sized = lines_sized(version);
    return layout;
  }
  // A minor newer than every table: sampled if its struct has the shape of a known one's.
  std::vector<const GeneratedLayout*> known;
  for (const auto& t : generated_layouts()) {
    if (has_debug_offsets(t.major, t.minor) && t.minor < minor) known.push_back(&t);
  }
  std::sort(known.begin(), known.end(), [](auto* a, auto* b) { return a->minor > b->minor; });
  for (const GeneratedLayout* t : known) {
    const DebugOffsets debug(bytes, *t);
    if (!debug.anchors_hold()) continue;
    auto layout = apply(debug, *t);
    if (!layout) continue;
    layout->major = major;
    layout->minor = minor;
    layout->borrowed_minor = t->minor;
    layout->monitoring_lines_sized = lines_sized(version);
    return layout;
  }
  return Error{fmt::format("Python {}.{} is newer than this dapprof (it reads CPython {}), and its "
                           "_Py_DebugOffsets have a shape dapprof does not know: update dapprof",
                           major, minor, supported_range()),
               ErrorCode::UnsupportedVersion};
}

std::vector<std::string_view> debug_offset_fields(int minor) {
  std::vector<std::string_view> out;
  const GeneratedLayout* table = table_for(3, minor);
  if (!table || !has_debug_offsets(3, minor)) return out;
  for (const auto& b : kDebugBindings) {
    if (position(*table, b.name)) out.push_back(b.name);
  }
  out.push_back("interpreter_state.gil_runtime_state_locked");
  out.push_back("interpreter_state.gil_runtime_state_holder");
  for (std::string_view gc : {"interpreter_state.gc", "gc.collecting"})
    if (position(*table, gc)) out.push_back(gc);
  return out;
}

}  // namespace dapprof::sampler::python
