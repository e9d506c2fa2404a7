/* Prints the offsets and sizes of the CPython internals dapprof's sampler reads, for the
 * interpreter whose headers this file is compiled against (with -DPy_BUILD_CORE). One
 * "name value" line per field; generate.py turns the output of every version into C++. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <frameobject.h>
#include <opcode.h>
#include <stddef.h>
#include <stdio.h>

#if PY_VERSION_HEX < 0x03080000
#include <internal/pystate.h>
#elif PY_VERSION_HEX < 0x03090000
#include <internal/pycore_pystate.h>
#else
#include <internal/pycore_interp.h>
#include <internal/pycore_runtime.h>
#endif
#if PY_VERSION_HEX >= 0x030B0000
#include <internal/pycore_dict.h>
#include <internal/pycore_frame.h>
#endif
#if PY_VERSION_HEX >= 0x030C0000
#include <internal/pycore_gil.h>
#endif
#if PY_VERSION_HEX >= 0x030E0000
#include <internal/pycore_frame.h>
#include <internal/pycore_interpframe_structs.h>
#endif

#if PY_VERSION_HEX < 0x030B0000
/* Objects/dict-common.h is not installed before 3.11; its layout (3.8-3.10) mirrored here. */
typedef Py_ssize_t (*dict_lookup_func)(void *, PyObject *, Py_hash_t, PyObject **);
struct mirror_dict_keys {
  Py_ssize_t dk_refcnt;
  Py_ssize_t dk_size;
  dict_lookup_func dk_lookup;
  Py_ssize_t dk_usable;
  Py_ssize_t dk_nentries;
  char dk_indices[];
};
struct mirror_dict_entry {
  Py_hash_t me_hash;
  PyObject *me_key;
  PyObject *me_value;
};
#endif

#if PY_VERSION_HEX >= 0x03080000 && PY_VERSION_HEX < 0x030E0000
/* The C Task and Future objects of Modules/_asynciomodule.c, whose structs that file keeps to
 * itself (3.14 publishes their offsets in .AsyncioDebug instead). Mirrored per minor version from
 * CPython's sources; generate.py checks each mirror against the interpreter it measures: the
 * sizes and the dict and weakref slots with the types' own __basicsize__, __dictoffset__ and
 * __weakrefoffset__, and every field the sampler reads against live objects (tools/layouts/
 * asyncio_probe.py). */
#if PY_VERSION_HEX < 0x030D0000
#define MIRROR_FUTURE_FLAGS int log_tb; int blocking; PyObject *dict; PyObject *weakreflist;
#else /* 3.13: one-bit flags, and the dict and weakrefs managed by the interpreter */
#define MIRROR_FUTURE_FLAGS unsigned log_tb : 1; unsigned blocking : 1;
#endif
#if PY_VERSION_HEX < 0x03090000
#define MIRROR_FUTURE_HEAD \
  PyObject_HEAD PyObject *loop; PyObject *callback0; PyObject *context0; PyObject *callbacks; \
  PyObject *exception; PyObject *result; PyObject *source_tb; int state; MIRROR_FUTURE_FLAGS
#elif PY_VERSION_HEX < 0x030A0000
#define MIRROR_FUTURE_HEAD \
  PyObject_HEAD PyObject *loop; PyObject *callback0; PyObject *context0; PyObject *callbacks; \
  PyObject *exception; PyObject *result; PyObject *source_tb; PyObject *cancel_msg; int state; \
  MIRROR_FUTURE_FLAGS _PyErr_StackItem cancelled_exc_state;
#elif PY_VERSION_HEX < 0x030B0000
#define MIRROR_FUTURE_HEAD \
  PyObject_HEAD PyObject *loop; PyObject *callback0; PyObject *context0; PyObject *callbacks; \
  PyObject *exception; PyObject *exception_tb; PyObject *result; PyObject *source_tb; \
  PyObject *cancel_msg; int state; MIRROR_FUTURE_FLAGS _PyErr_StackItem cancelled_exc_state;
#elif PY_VERSION_HEX < 0x030D0000
#define MIRROR_FUTURE_HEAD \
  PyObject_HEAD PyObject *loop; PyObject *callback0; PyObject *context0; PyObject *callbacks; \
  PyObject *exception; PyObject *exception_tb; PyObject *result; PyObject *source_tb; \
  PyObject *cancel_msg; int state; MIRROR_FUTURE_FLAGS PyObject *cancelled_exc;
#else
#define MIRROR_FUTURE_HEAD \
  PyObject_HEAD PyObject *loop; PyObject *callback0; PyObject *context0; PyObject *callbacks; \
  PyObject *exception; PyObject *exception_tb; PyObject *result; PyObject *source_tb; \
  PyObject *cancel_msg; PyObject *cancelled_exc; int state; MIRROR_FUTURE_FLAGS
#endif
/* functools.partial (Modules/_functoolsmodule.c keeps it private too): asyncio.wait_for before
 * 3.12 wakes its waiter through one. */
struct mirror_partial {
  PyObject_HEAD PyObject *fn;
  PyObject *args;
};
struct mirror_future {
  MIRROR_FUTURE_HEAD
};
struct mirror_task {
  MIRROR_FUTURE_HEAD
#if PY_VERSION_HEX >= 0x030D0000
  unsigned must_cancel : 1;
  unsigned log_destroy_pending : 1;
  int num_cancels_requested;
#endif
  PyObject *fut_waiter;
  PyObject *coro;
  PyObject *name;
  PyObject *context;
#if PY_VERSION_HEX < 0x030D0000
  int must_cancel;
  int log_destroy_pending;
#endif
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030D0000
  int num_cancels_requested;
#endif
};
#endif

#define P(name, value) printf("%s %lu\n", name, (unsigned long)(value))
/* The position of a field inside _Py_DebugOffsets, named after it. */
#define D(field) P("debug." #field, offsetof(_Py_DebugOffsets, field))

int main(void) {
  P("version_hex", PY_VERSION_HEX);

  /* _PyRuntimeState */
  P("runtime.interpreters_head", offsetof(_PyRuntimeState, interpreters.head));
#if PY_VERSION_HEX < 0x030C0000
  P("runtime.tstate_current", offsetof(_PyRuntimeState, gilstate.tstate_current));
#endif

  /* The collector's state: whether it is collecting (the generation it collects is a C local
   * of the collector, kept nowhere a reader can find it). 3.7-3.8 keep it in the runtime, 3.9+
   * per interpreter. */
#if PY_VERSION_HEX < 0x03090000
  P("runtime.gc_collecting", offsetof(_PyRuntimeState, gc.collecting));
#else
  P("interp.gc_collecting", offsetof(PyInterpreterState, gc.collecting));
#endif

  /* PyInterpreterState */
  P("interp.next", offsetof(PyInterpreterState, next));
#if PY_VERSION_HEX < 0x030B0000
  P("interp.threads_head", offsetof(PyInterpreterState, tstate_head));
#else
  P("interp.threads_head", offsetof(PyInterpreterState, threads.head));
#endif
#if PY_VERSION_HEX < 0x030C0000
  P("interp.modules", offsetof(PyInterpreterState, modules));
#else
  P("interp.modules", offsetof(PyInterpreterState, imports.modules));
  P("interp.ceval_gil", offsetof(PyInterpreterState, ceval.gil));
  P("gil.locked", offsetof(struct _gil_runtime_state, locked));
  P("gil.last_holder", offsetof(struct _gil_runtime_state, last_holder));
#endif

  /* PyThreadState */
  P("tstate.size", sizeof(PyThreadState));
  P("tstate.next", offsetof(PyThreadState, next));
  P("tstate.interp", offsetof(PyThreadState, interp));
#if PY_VERSION_HEX < 0x030B0000
  P("tstate.frame", offsetof(PyThreadState, frame));
#elif PY_VERSION_HEX < 0x030D0000
  P("tstate.cframe", offsetof(PyThreadState, cframe));
  P("cframe.current_frame", offsetof(_PyCFrame, current_frame));
#else
  P("tstate.current_frame", offsetof(PyThreadState, current_frame));
#endif
  P("tstate.thread_id", offsetof(PyThreadState, thread_id));
#if PY_VERSION_HEX >= 0x030B0000
  P("tstate.native_thread_id", offsetof(PyThreadState, native_thread_id));
#endif
  /* The exception being handled (sampling mode "exception"): the innermost item of the thread's
   * stack of handled exceptions, and through each item the one it shadows. 3.11+ keep only the
   * exception; before, its type too. */
  P("tstate.exc_info", offsetof(PyThreadState, exc_info));
  P("errstack.previous", offsetof(_PyErr_StackItem, previous_item));
  P("errstack.exc_value", offsetof(_PyErr_StackItem, exc_value));
#if PY_VERSION_HEX < 0x030B0000
  P("errstack.exc_type", offsetof(_PyErr_StackItem, exc_type));
#endif

  /* Frames */
#if PY_VERSION_HEX < 0x030B0000
  P("frame.size", sizeof(PyFrameObject));
  P("frame.previous", offsetof(PyFrameObject, f_back));
  P("frame.code", offsetof(PyFrameObject, f_code));
  P("frame.lasti", offsetof(PyFrameObject, f_lasti));
  P("frame.localsplus", offsetof(PyFrameObject, f_localsplus));
#else
  P("frame.localsplus", offsetof(struct _PyInterpreterFrame, localsplus));
  P("frame.size", offsetof(struct _PyInterpreterFrame, localsplus));
  P("frame.previous", offsetof(struct _PyInterpreterFrame, previous));
#if PY_VERSION_HEX < 0x030D0000
  P("frame.code", offsetof(struct _PyInterpreterFrame, f_code));
  P("frame.instr", offsetof(struct _PyInterpreterFrame, prev_instr));
#else
  P("frame.code", offsetof(struct _PyInterpreterFrame, f_executable));
  P("frame.instr", offsetof(struct _PyInterpreterFrame, instr_ptr));
#endif
  P("frame.owner", offsetof(struct _PyInterpreterFrame, owner));
#endif

  /* PyCodeObject */
  P("code.size", sizeof(PyCodeObject));
  P("code.name", offsetof(PyCodeObject, co_name));
  P("code.filename", offsetof(PyCodeObject, co_filename));
  P("code.firstlineno", offsetof(PyCodeObject, co_firstlineno));
  P("code.argcount", offsetof(PyCodeObject, co_argcount));
  P("code.kwonlyargcount", offsetof(PyCodeObject, co_kwonlyargcount));
  P("code.flags", offsetof(PyCodeObject, co_flags));
#if PY_VERSION_HEX < 0x030A0000
  P("code.linetable", offsetof(PyCodeObject, co_lnotab));
#else
  P("code.linetable", offsetof(PyCodeObject, co_linetable));
#endif
#if PY_VERSION_HEX < 0x030B0000
  P("code.nlocals", offsetof(PyCodeObject, co_nlocals));
  P("code.varnames", offsetof(PyCodeObject, co_varnames));
  P("code.cellvars", offsetof(PyCodeObject, co_cellvars));
  P("code.freevars", offsetof(PyCodeObject, co_freevars));
#else
  P("code.localsplusnames", offsetof(PyCodeObject, co_localsplusnames));
  P("code.localspluskinds", offsetof(PyCodeObject, co_localspluskinds));
#endif
#if PY_VERSION_HEX >= 0x030B0000
  P("code.qualname", offsetof(PyCodeObject, co_qualname));
  P("code.code_adaptive", offsetof(PyCodeObject, co_code_adaptive));
  P("code.firsttraceable", offsetof(PyCodeObject, _co_firsttraceable));
#endif
#if PY_VERSION_HEX >= 0x030C0000
  /* sys.monitoring (3.12+) rewrites instructions in place: INSTRUMENTED_LINE and
   * INSTRUMENTED_INSTRUCTION keep the opcode they replace in the code object's monitoring data,
   * one entry per code unit. (How a `lines` entry is laid out changed in 3.13.3, within a minor
   * version: the sampler decides that from the target's full version.) */
  P("code.monitoring", offsetof(PyCodeObject, _co_monitoring));
  P("monitoring.lines", offsetof(_PyCoMonitoringData, lines));
  P("monitoring.per_instruction_opcodes", offsetof(_PyCoMonitoringData, per_instruction_opcodes));
#endif

  /* Strings, bytes, ints */
  P("unicode.length", offsetof(PyASCIIObject, length));
  P("unicode.state", offsetof(PyASCIIObject, state));
  P("unicode.ascii_size", sizeof(PyASCIIObject));
  P("unicode.compact_size", sizeof(PyCompactUnicodeObject));
  P("bytes.size", offsetof(PyVarObject, ob_size));
  P("bytes.sval", offsetof(PyBytesObject, ob_sval));
#if PY_VERSION_HEX < 0x030C0000
  P("long.size", offsetof(PyVarObject, ob_size));
#else
  P("long.size", offsetof(PyLongObject, long_value.lv_tag));
#endif
#if PY_VERSION_HEX < 0x030C0000
  P("long.digit", offsetof(PyLongObject, ob_digit));
#else
  P("long.digit", offsetof(PyLongObject, long_value.ob_digit));
#endif

  /* Containers and scalars, for the values of local variables */
  P("tuple.size", offsetof(PyVarObject, ob_size));
  P("tuple.items", offsetof(PyTupleObject, ob_item));
  P("list.size", offsetof(PyVarObject, ob_size));
  P("float.value", offsetof(PyFloatObject, ob_fval));
  P("cell.ref", offsetof(PyCellObject, ob_ref));

  /* Objects, types, modules */
  P("object.type", offsetof(PyObject, ob_type));
  P("type.name", offsetof(PyTypeObject, tp_name));
  P("type.basicsize", offsetof(PyTypeObject, tp_basicsize));
  P("type.dictoffset", offsetof(PyTypeObject, tp_dictoffset));
  P("type.flags", offsetof(PyTypeObject, tp_flags));
#if PY_VERSION_HEX >= 0x030B0000
  P("heaptype.cached_keys", offsetof(PyHeapTypeObject, ht_cached_keys));
#endif

  /* Dicts */
  P("dict.used", offsetof(PyDictObject, ma_used));
  P("dict.keys", offsetof(PyDictObject, ma_keys));
  P("dict.values", offsetof(PyDictObject, ma_values));
#if PY_VERSION_HEX < 0x030B0000
  P("keys.size", offsetof(struct mirror_dict_keys, dk_size));
  P("keys.nentries", offsetof(struct mirror_dict_keys, dk_nentries));
  P("keys.indices", offsetof(struct mirror_dict_keys, dk_indices));
  P("keys.entry_size", sizeof(struct mirror_dict_entry));
#else
  P("keys.log2_size", offsetof(PyDictKeysObject, dk_log2_size));
  P("keys.log2_index_bytes", offsetof(PyDictKeysObject, dk_log2_index_bytes));
  P("keys.kind", offsetof(PyDictKeysObject, dk_kind));
  P("keys.nentries", offsetof(PyDictKeysObject, dk_nentries));
  P("keys.indices", offsetof(PyDictKeysObject, dk_indices));
  P("keys.entry_size", sizeof(PyDictKeyEntry));
  P("keys.unicode_entry_size", sizeof(PyDictUnicodeEntry));
#endif
#if PY_VERSION_HEX >= 0x030D0000
  P("values.values", offsetof(PyDictValues, values));
#endif
#if PY_VERSION_HEX >= 0x030D0000
  /* Where each offset the sampler takes from the target's own _Py_DebugOffsets sits inside that
   * struct, whose shape is fixed per minor version (fields are added in new minors). The sampler
   * reads the struct at attach and takes the values from these positions. */
  P("debug.size", sizeof(_Py_DebugOffsets));
  D(version);
  D(free_threaded);
  D(runtime_state.interpreters_head);
  D(interpreter_state.next);
  D(interpreter_state.threads_head);
  D(interpreter_state.imports_modules);
  D(interpreter_state.ceval_gil);
  D(interpreter_state.gil_runtime_state);
  D(interpreter_state.gil_runtime_state_locked);
  D(interpreter_state.gil_runtime_state_holder);
  D(thread_state.size);
  D(thread_state.next);
  D(thread_state.interp);
  D(thread_state.current_frame);
  D(thread_state.thread_id);
  D(thread_state.native_thread_id);
  D(interpreter_frame.size);
  D(interpreter_frame.previous);
  D(interpreter_frame.executable);
  D(interpreter_frame.instr_ptr);
  D(interpreter_frame.localsplus);
  D(interpreter_frame.owner);
  D(code_object.size);
  D(code_object.filename);
  D(code_object.name);
  D(code_object.qualname);
  D(code_object.linetable);
  D(code_object.firstlineno);
  D(code_object.co_code_adaptive);
  D(pyobject.ob_type);
  D(type_object.tp_flags);
  D(dict_object.ma_keys);
  D(dict_object.ma_values);
  D(long_object.lv_tag);
  D(long_object.ob_digit);
  D(bytes_object.ob_size);
  D(bytes_object.ob_sval);
  D(unicode_object.state);
  D(unicode_object.length);
  D(unicode_object.asciiobject_size);
#endif
#if PY_VERSION_HEX >= 0x030E0000
  /* asyncio tasks, read from outside (3.14+): a task's coroutine is a generator object whose
   * frame is embedded in it; what it awaits is on that frame's value stack; awaited-by sets are
   * sets; the task lists are llist_node rings. */
  P("gen.size", sizeof(PyGenObject));
  P("gen.iframe", offsetof(PyGenObject, gi_iframe));
  P("gen.frame_state", offsetof(PyGenObject, gi_frame_state));
  /* gi_frame_state values, as the byte the sampler reads (the enum is signed on 3.14). */
  P("gen.state_suspended_yield_from", (unsigned char)FRAME_SUSPENDED_YIELD_FROM);
  P("gen.state_cleared", (unsigned char)FRAME_CLEARED);
  P("frame.stackpointer", offsetof(_PyInterpreterFrame, stackpointer));
  D(gen_object.size);
  D(gen_object.gi_iframe);
  D(gen_object.gi_frame_state);
  D(interpreter_frame.stackpointer);
  D(set_object.used);
  D(set_object.mask);
  D(set_object.table);
#endif
  /* Sets (asyncio's task registries and awaiter sets) */
  P("set.used", offsetof(PySetObject, used));
  P("set.mask", offsetof(PySetObject, mask));
  P("set.table", offsetof(PySetObject, table));
  P("set.entry_size", sizeof(setentry));
#if PY_VERSION_HEX >= 0x03080000 && PY_VERSION_HEX < 0x030E0000
  /* asyncio tasks before 3.14: the C Task and Future (mirrored above), the WeakSet's weak
   * references, the callables a future's done-callbacks are, and the coroutines' frames. */
  P("task.size", sizeof(struct mirror_task));
  P("task.fut_waiter", offsetof(struct mirror_task, fut_waiter));
  P("task.coro", offsetof(struct mirror_task, coro));
  P("task.name", offsetof(struct mirror_task, name));
#if PY_VERSION_HEX < 0x030D0000
  P("task.must_cancel", offsetof(struct mirror_task, must_cancel));
  P("future.dict", offsetof(struct mirror_future, dict));
  P("future.weakreflist", offsetof(struct mirror_future, weakreflist));
#endif
#if PY_VERSION_HEX >= 0x030B0000
  P("task.num_cancels_requested", offsetof(struct mirror_task, num_cancels_requested));
#endif
  P("future.size", sizeof(struct mirror_future));
  P("future.loop", offsetof(struct mirror_future, loop));
  P("future.callback0", offsetof(struct mirror_future, callback0));
  P("future.callbacks", offsetof(struct mirror_future, callbacks));
  P("future.state", offsetof(struct mirror_future, state));
  P("weakref.object", offsetof(PyWeakReference, wr_object));
  P("function.closure", offsetof(PyFunctionObject, func_closure));
  P("method.self", offsetof(PyMethodObject, im_self));
  P("partial.args", offsetof(struct mirror_partial, args));
  P("type.base", offsetof(PyTypeObject, tp_base));
  P("list.items", offsetof(PyListObject, ob_item));
#if PY_VERSION_HEX < 0x030B0000
  /* The coroutine points at a frame object of its own; suspended in an await, the frame's last
   * instruction is the one before YIELD_FROM and the awaited object tops its value stack. */
  P("gen.size", sizeof(PyCoroObject));
  P("gen.frame", offsetof(PyCoroObject, cr_frame));
  P("code.code", offsetof(PyCodeObject, co_code));
  P("opcode.yield_from", YIELD_FROM);
#if PY_VERSION_HEX < 0x030A0000
  P("frame.stacktop", offsetof(PyFrameObject, f_stacktop)); /* NULL unless suspended */
#else
  P("frame.valuestack", offsetof(PyFrameObject, f_valuestack));
  P("frame.stackdepth", offsetof(PyFrameObject, f_stackdepth));
  P("frame.state", offsetof(PyFrameObject, f_state));
  P("frame.state_suspended", (unsigned char)FRAME_SUSPENDED);
#endif
#else
  /* The frame is embedded in the coroutine; its value stack is localsplus[0..stacktop). */
  P("gen.size", sizeof(PyCoroObject));
  P("gen.iframe", offsetof(PyCoroObject, cr_iframe));
  P("gen.frame_state", offsetof(PyCoroObject, cr_frame_state));
  P("gen.state_cleared", (unsigned char)FRAME_CLEARED);
  P("frame.stacktop_index", offsetof(struct _PyInterpreterFrame, stacktop));
#if PY_VERSION_HEX < 0x030D0000
  /* Suspended in an await when the next instruction is RESUME (or what 3.11 quickens it to, or
   * 3.12 instruments it as) with an oparg of 2 or more. */
  P("gen.state_suspended", (unsigned char)FRAME_SUSPENDED);
  P("opcode.resume", RESUME);
#if PY_VERSION_HEX < 0x030C0000
  P("opcode.resume_quick", RESUME_QUICK); /* RESUME once its code is warm */
#else
  P("opcode.instrumented_resume", INSTRUMENTED_RESUME);
#endif
#else
  P("gen.state_suspended_yield_from", (unsigned char)FRAME_SUSPENDED_YIELD_FROM);
#endif
#endif
#endif
#if PY_VERSION_HEX >= 0x030D0000
  D(interpreter_state.gc);
  D(gc.collecting);
#endif
#if PY_VERSION_HEX >= 0x030F0000
  D(type_object.tp_basicsize);
  D(type_object.tp_dictoffset);
  D(heap_type_object.ht_cached_keys);
  D(unicode_object.compactunicodeobject_size);
#endif
  return 0;
}
