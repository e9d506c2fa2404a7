#include "sampler/python/layout.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <string_view>

#include "sampler/python/layouts_generated.hpp"

namespace dapprof::sampler::python {
namespace {

// Generated field name -> Layout member.
constexpr FieldBinding kBindings[] = {
    {"runtime.interpreters_head", &Layout::runtime_interpreters_head},
    {"runtime.tstate_current", &Layout::runtime_tstate_current},
    {"runtime.gc_collecting", &Layout::runtime_gc_collecting},
    {"interp.gc_collecting", &Layout::interp_gc_collecting},
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
    {"tstate.exc_info", &Layout::tstate_exc_info},
    {"errstack.previous", &Layout::errstack_previous},
    {"errstack.exc_value", &Layout::errstack_exc_value},
    {"errstack.exc_type", &Layout::errstack_exc_type},
    {"frame.size", &Layout::frame_size},
    {"frame.previous", &Layout::frame_previous},
    {"frame.code", &Layout::frame_code},
    {"frame.lasti", &Layout::frame_lasti},
    {"frame.instr", &Layout::frame_instr},
    {"frame.owner", &Layout::frame_owner},
    {"frame.localsplus", &Layout::frame_localsplus},
    {"code.size", &Layout::code_size},
    {"code.name", &Layout::code_name},
    {"code.filename", &Layout::code_filename},
    {"code.firstlineno", &Layout::code_firstlineno},
    {"code.linetable", &Layout::code_linetable},
    {"code.qualname", &Layout::code_qualname},
    {"code.code_adaptive", &Layout::code_code_adaptive},
    {"code.firsttraceable", &Layout::code_firsttraceable},
    {"code.argcount", &Layout::code_argcount},
    {"code.kwonlyargcount", &Layout::code_kwonlyargcount},
    {"code.flags", &Layout::code_flags},
    {"code.nlocals", &Layout::code_nlocals},
    {"code.varnames", &Layout::code_varnames},
    {"code.cellvars", &Layout::code_cellvars},
    {"code.freevars", &Layout::code_freevars},
    {"code.localsplusnames", &Layout::code_localsplusnames},
    {"code.localspluskinds", &Layout::code_localspluskinds},
    {"code.monitoring", &Layout::code_monitoring},
    {"monitoring.lines", &Layout::monitoring_lines},
    {"monitoring.per_instruction_opcodes", &Layout::monitoring_per_instruction_opcodes},
    {"unicode.length", &Layout::unicode_length},
    {"unicode.state", &Layout::unicode_state},
    {"unicode.ascii_size", &Layout::unicode_ascii_size},
    {"unicode.compact_size", &Layout::unicode_compact_size},
    {"bytes.size", &Layout::bytes_size},
    {"bytes.sval", &Layout::bytes_sval},
    {"long.size", &Layout::long_size},
    {"long.digit", &Layout::long_digit},
    {"tuple.size", &Layout::tuple_size},
    {"tuple.items", &Layout::tuple_items},
    {"list.size", &Layout::list_size},
    {"float.value", &Layout::float_value},
    {"cell.ref", &Layout::cell_ref},
    {"object.type", &Layout::object_type},
    {"type.name", &Layout::type_name},
    {"type.basicsize", &Layout::type_basicsize},
    {"type.dictoffset", &Layout::type_dictoffset},
    {"type.flags", &Layout::type_flags},
    {"heaptype.cached_keys", &Layout::heaptype_cached_keys},
    {"dict.used", &Layout::dict_used},
    {"dict.keys", &Layout::dict_keys},
    {"dict.values", &Layout::dict_values},
    {"gen.size", &Layout::gen_size},
    {"gen.iframe", &Layout::gen_iframe},
    {"gen.frame_state", &Layout::gen_frame_state},
    {"gen.state_suspended_yield_from", &Layout::gen_state_suspended_yield_from},
    {"gen.state_cleared", &Layout::gen_state_cleared},
    {"frame.stackpointer", &Layout::frame_stackpointer},
    {"set.used", &Layout::set_used},
    {"set.mask", &Layout::set_mask},
    {"set.table", &Layout::set_table},
    {"set.entry_size", &Layout::set_entry_size},
    {"task.size", &Layout::task_size},
    {"task.fut_waiter", &Layout::task_fut_waiter},
    {"task.coro", &Layout::task_coro},
    {"task.name", &Layout::task_name},
    {"task.must_cancel", &Layout::task_must_cancel},
    {"task.num_cancels_requested", &Layout::task_num_cancels_requested},
    {"future.size", &Layout::future_size},
    {"future.loop", &Layout::future_loop},
    {"future.callback0", &Layout::future_callback0},
    {"future.callbacks", &Layout::future_callbacks},
    {"future.state", &Layout::future_state},
    {"future.dict", &Layout::future_dict},
    {"future.weakreflist", &Layout::future_weakreflist},
    {"weakref.object", &Layout::weakref_object},
    {"function.closure", &Layout::function_closure},
    {"method.self", &Layout::method_self},
    {"partial.args", &Layout::partial_args},
    {"type.base", &Layout::type_base},
    {"list.items", &Layout::list_items},
    {"gen.frame", &Layout::gen_frame},
    {"gen.state_suspended", &Layout::gen_state_suspended},
    {"code.code", &Layout::code_code},
    {"opcode.yield_from", &Layout::opcode_yield_from},
    {"opcode.resume", &Layout::opcode_resume},
    {"opcode.resume_quick", &Layout::opcode_resume_quick},
    {"opcode.instrumented_resume", &Layout::opcode_instrumented_resume},
    {"frame.stacktop", &Layout::frame_stacktop},
    {"frame.valuestack", &Layout::frame_valuestack},
    {"frame.stackdepth", &Layout::frame_stackdepth},
    {"frame.state", &Layout::frame_state},
    {"frame.state_suspended", &Layout::frame_state_suspended},
    {"frame.stacktop_index", &Layout::frame_stacktop_index},
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
    warn_if_foreign(table);
    Layout layout;
    layout.major = major;
    layout.minor = minor;
    for (const auto& field : table.fields) {
      if (auto member = member_for(field.name)) layout.*member = field.value;
    }
    if (!layout.at_least(3, 13)) layout.values_values = 0;
    layout.monitoring_lines_sized = layout.at_least(3, 14);
    return layout;
  }
  return Error{fmt::format("Python {}.{} is not supported (dapprof reads CPython {})", major, minor,
                           supported_range()),
               ErrorCode::UnsupportedVersion};
}

void warn_if_foreign(const GeneratedLayout& table) {
  if (table.architecture == kLayoutArchitecture) return;
  spdlog::warn(
      "Python {}.{}: no layout table measured for {}; using {}'s (CPython {}), whose offsets "
      "after a pthread_mutex_t (e.g. the GIL holder) may be wrong here: regenerate the tables "
      "with tools/layouts/generate.py --all",
      table.major, table.minor, kLayoutArchitecture, table.architecture, table.measured_on);
}

std::string supported_range() {
  const auto tables = generated_layouts();
  auto key = [](const GeneratedLayout& t) { return t.major * 100 + t.minor; };
  const auto [lo, hi] = std::minmax_element(
      tables.begin(), tables.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
  return fmt::format("{}.{} to {}.{}", lo->major, lo->minor, hi->major, hi->minor);
}

Error unreadable_version(int pid, std::string_view version, std::string_view why) {
  if (why.empty()) {
    return Error{fmt::format("process {} runs Python {}, which dapprof cannot read (supported: "
                             "CPython {})",
                             pid, version, supported_range()),
                 ErrorCode::UnsupportedVersion};
  }
  return Error{
      fmt::format("process {} runs Python {}, which dapprof cannot read: {}", pid, version, why),
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
    // The collector's flag is in one place or the other; without it, no collector frames.
    if (n == "runtime.gc_collecting" || n == "interp.gc_collecting") continue;
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
    if ((n == "code.nlocals" || n == "code.varnames" || n == "code.cellvars" ||
         n == "code.freevars") &&
        !old_frames)
      continue;
    if ((n == "code.localsplusnames" || n == "code.localspluskinds") && old_frames) continue;
    // Only the sampling mode "exception" reads these, and its attach says what it lacks.
    if (n == "tstate.exc_info" || n.starts_with("errstack.")) continue;
    // Only the asyncio task reader needs these, and it says itself what it lacks.
    if (n.starts_with("gen.") || n.starts_with("set.") || n == "frame.stackpointer" ||
        n.starts_with("task.") || n.starts_with("future.") || n.starts_with("opcode.") ||
        n.starts_with("frame.stack") || n.starts_with("frame.state") || n == "frame.valuestack" ||
        n == "weakref.object" || n == "function.closure" || n == "method.self" ||
        n == "partial.args" || n == "type.base" || n == "list.items" || n == "code.code")
      continue;
    // Only record --opcodes reads these, on 3.12+, and does without them.
    if (n == "code.monitoring" || n.starts_with("monitoring.")) continue;
    need(n, l.*(b.member));
  }
  return missing;
}

}  // namespace dapprof::sampler::python
