#include "sampler/python/layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <string_view>

#include "sampler/python/layouts_generated.hpp"

namespace dapprof::sampler::python {
namespace {

struct Binding {
  std::string_view name;
  std::uint64_t Layout::*member;
};

// Generated field name -> Layout member.
constexpr Binding kBindings[] = {
    {"runtime.interpreters_head", &Layout::runtime_interpreters_head},
    {"runtime.tstate_current", &Layout::runtime_tstate_current},
    {"interp.next", &Layout::interp_next},
    {"interp.threads_head", &Layout::interp_threads_head},
    {"interp.modules", &Layout::interp_modules},
    {"interp.ceval_gil", &Layout::interp_ceval_gil},
    {"gil.locked", &Layout::gil_locked},
    {"gil.last_holder", &Layout::gil_last_holder},
    {"tstate.size", &Layout::tstate_size},
    {"tstate.next", &Layout::tstate_next},
    {"tstate.interp", &Layout::tstate_interp},
    {"tstate.frame", &Layout::tstate_frame},
    {"tstate.cframe", &Layout::tstate_cframe},
    {"cframe.current_frame", &Layout::cframe_current_frame},
    {"tstate.current_frame", &Layout::tstate_current_frame},
    {"tstate.thread_id", &Layout::tstate_thread_id},
    {"tstate.native_thread_id", &Layout::tstate_native_thread_id},
    {"frame.size", &Layout::frame_size},
    {"frame.previous", &Layout::frame_previous},
    {"frame.code", &Layout::frame_code},
    {"frame.lasti", &Layout::frame_lasti},
    {"frame.instr", &Layout::frame_instr},
    {"frame.owner", &Layout::frame_owner},
    {"code.size", &Layout::code_size},
    {"code.name", &Layout::code_name},
    {"code.filename", &Layout::code_filename},
    {"code.firstlineno", &Layout::code_firstlineno},
    {"code.linetable", &Layout::code_linetable},
    {"code.qualname", &Layout::code_qualname},
    {"code.code_adaptive", &Layout::code_code_adaptive},
    {"code.firsttraceable", &Layout::code_firsttraceable},
    {"unicode.length", &Layout::unicode_length},
    {"unicode.state", &Layout::unicode_state},
    {"unicode.ascii_size", &Layout::unicode_ascii_size},
    {"unicode.compact_size", &Layout::unicode_compact_size},
    {"bytes.size", &Layout::bytes_size},
    {"bytes.sval", &Layout::bytes_sval},
    {"long.size", &Layout::long_size},
    {"long.digit", &Layout::long_digit},
    {"object.type", &Layout::object_type},
    {"type.basicsize", &Layout::type_basicsize},
    {"type.dictoffset", &Layout::type_dictoffset},
    {"type.flags", &Layout::type_flags},
    {"heaptype.cached_keys", &Layout::heaptype_cached_keys},
    {"dict.used", &Layout::dict_used},
    {"dict.keys", &Layout::dict_keys},
    {"dict.values", &Layout::dict_values},
    {"keys.size", &Layout::keys_size},
    {"keys.log2_size", &Layout::keys_log2_size},
    {"keys.log2_index_bytes", &Layout::keys_log2_index_bytes},
    {"keys.kind", &Layout::keys_kind},
    {"keys.nentries", &Layout::keys_nentries},
    {"keys.indices", &Layout::keys_indices},
    {"keys.entry_size", &Layout::keys_entry_size},
    {"keys.unicode_entry_size", &Layout::keys_unicode_entry_size},
    {"values.values", &Layout::values_values},
};

std::uint64_t Layout::*member_for(std::string_view name) {
  for (const auto& b : kBindings) {
    if (b.name == name) return b.member;
  }
  return nullptr;
}

}  // namespace

Result<Layout> layout_for(int major, int minor) {
  for (const auto& table : generated_layouts()) {
    if (table.major != major || table.minor != minor) continue;
    Layout layout;
    layout.major = major;
    layout.minor = minor;
    for (const auto& field : table.fields) {
      if (auto member = member_for(field.name)) layout.*member = field.value;
    }
    if (!layout.at_least(3, 13)) layout.values_values = 0;
    return layout;
  }
  return Error{fmt::format("Python {}.{} is not supported (dapprof reads CPython 3.8 to 3.13)",
                           major, minor),
               ErrorCode::UnsupportedVersion};
}

std::string missing_fields(const Layout& l) {
  std::string missing;
  auto need = [&](std::string_view name, std::uint64_t value) {
    if (value != kAbsent) return;
    if (!missing.empty()) missing += ", ";
    missing += name;
  };
  for (const auto& b : kBindings) {
    const std::string_view n = b.name;
    const bool old_frames = !l.at_least(3, 11);
    // Fields that exist only in some versions.
    if (n == "runtime.tstate_current" && l.at_least(3, 12)) continue;
    if ((n == "interp.ceval_gil" || n.starts_with("gil.")) && !l.at_least(3, 12)) continue;
    if (n == "tstate.frame" && !old_frames) continue;
    if ((n == "tstate.cframe" || n == "cframe.current_frame") && (old_frames || l.at_least(3, 13)))
      continue;
    if (n == "tstate.current_frame" && !l.at_least(3, 13)) continue;
    if (n == "frame.lasti" && !old_frames) continue;
    if ((n == "tstate.native_thread_id" || n == "frame.instr" || n == "frame.owner" ||
         n == "code.qualname" || n == "code.code_adaptive" || n == "code.firsttraceable" ||
         n == "heaptype.cached_keys" || n.starts_with("keys.log2") || n == "keys.kind" ||
         n == "keys.unicode_entry_size") &&
        old_frames)
      continue;
    if (n == "keys.size" && !old_frames) continue;
    need(n, l.*(b.member));
  }
  return missing;
}

Status apply_debug_offsets(Layout& l, std::span<const std::byte> bytes) {
  if (bytes.size() < kDebugOffsetsSize) {
    return Error{"_Py_DebugOffsets: short read", ErrorCode::Generic};
  }
  if (std::memcmp(bytes.data(), "xdebugpy", 8) != 0) {
    return Error{"_PyRuntime does not start with the _Py_DebugOffsets cookie \"xdebugpy\"",
                 ErrorCode::NotPython};
  }
  auto word = [&](std::size_t index) {
    std::uint64_t v;
    std::memcpy(&v, bytes.data() + index * 8, 8);
    return v;
  };
  if (word(2) != 0) {
    return Error{"free-threaded CPython builds are not supported", ErrorCode::UnsupportedVersion};
  }
  // Indexes of the uint64 fields of _Py_DebugOffsets as of 3.13 (checked against the headers by
  // the layout generator's "debug.*" entries).
  l.runtime_interpreters_head = word(5);
  l.interp_next = word(8);
  l.interp_threads_head = word(9);
  l.interp_modules = word(11);
  l.interp_ceval_gil = word(14);
  l.gil_locked = word(17) - word(15);
  l.gil_last_holder = word(18) - word(15);
  l.tstate_next = word(21);
  l.tstate_interp = word(22);
  l.tstate_current_frame = word(23);
  l.tstate_thread_id = word(24);
  l.tstate_native_thread_id = word(25);
  l.frame_previous = word(29);
  l.frame_code = word(30);
  l.frame_instr = word(31);
  l.frame_owner = word(33);
  l.code_filename = word(35);
  l.code_name = word(36);
  l.code_qualname = word(37);
  l.code_linetable = word(38);
  l.code_firstlineno = word(39);
  l.code_code_adaptive = word(43);
  l.object_type = word(45);
  l.type_flags = word(49);
  l.dict_keys = word(57);
  l.dict_values = word(58);
  l.long_size = word(62);
  l.long_digit = word(63);
  l.bytes_size = word(65);
  l.bytes_sval = word(66);
  l.unicode_state = word(68);
  l.unicode_length = word(69);
  l.unicode_ascii_size = word(70);
  // Sizes to read: never less than what the offsets above need.
  auto at_least = [](std::uint64_t& size, std::uint64_t end) {
    if (size == kAbsent || size < end) size = end;
  };
  at_least(l.tstate_size, std::max({l.tstate_next, l.tstate_interp, l.tstate_current_frame,
                                    l.tstate_thread_id, l.tstate_native_thread_id}) +
                              8);
  at_least(l.frame_size, std::max({l.frame_previous, l.frame_code, l.frame_instr}) + 8);
  at_least(l.frame_size, l.frame_owner + 1);
  at_least(l.code_size, std::max({l.code_filename, l.code_name, l.code_qualname, l.code_linetable,
                                  l.code_firstlineno}) +
                            8);
  // Anything absurd means we misread the struct: better to refuse than to walk garbage.
  for (std::uint64_t v : {l.tstate_size, l.frame_size, l.code_size, l.interp_modules}) {
    if (v > (1u << 20)) {
      return Error{"_Py_DebugOffsets holds implausible offsets", ErrorCode::UnsupportedVersion};
    }
  }
  return Ok{};
}

}  // namespace dapprof::sampler::python
