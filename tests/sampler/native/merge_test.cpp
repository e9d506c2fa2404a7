// native::merge and native::classify with hand-built stacks, one case per version rule.
#include "sampler/native/merge.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <vector>

namespace dapprof::sampler::native {
namespace {

constexpr const char* kLibpython = "/opt/python/lib/libpython3.x.so.1.0";

// A stack under construction: frames are added innermost first.
class Stacks {
 public:
  // A native frame of `module` ("" for libpython); role as the symbolizer would give it.
  Stacks& native(const std::string& function, const std::string& module = "/lib/libc.so.6",
                 bool symbolized = true) {
    NativeFrame f;
    f.function = function;
    f.module = module.empty() ? kLibpython : module;
    f.interpreter = module.empty();
    f.symbolized = symbolized;
    f.role = classify(function, symbolized, f.interpreter);
    frames_.push_back(std::move(f));
    sps_.push_back(0x7000 + 0x100 * sps_.size());  // each frame 256 bytes above its callee
    return *this;
  }
  // 3.12+: the shim frames' addresses, one per group (0 for none).
  Stacks& entries(std::vector<std::uint64_t> e) {
    entries_ = std::move(e);
    return *this;
  }
  // The address inside the stack range of native frame i (innermost first).
  std::uint64_t inside(std::size_t i) const { return sps_.at(i) + 0x40; }
  Stacks& interp(const std::string& function) { return native(function, ""); }
  Stacks& eval() { return interp("_PyEval_EvalFrameDefault"); }
  Stacks& python(const std::string& function) {
    model::Frame f;
    f.function = function;
    f.file = "/app/" + function + ".py";
    f.line = 7;
    python_.push_back(f);
    return *this;
  }
  Stacks& groups(std::vector<std::uint32_t> g) {
    groups_ = std::move(g);
    return *this;
  }

  // Names of the merged frames, innermost first; native ones as "C:name".
  std::vector<std::string> merged(bool keep_all = false) const {
    std::vector<const NativeFrame*> natives;
    for (const auto& f : frames_) natives.push_back(&f);
    const auto out = merge(MergeInput{natives, python_, groups_, keep_all, entries_, sps_});
    std::vector<std::string> names;
    for (const auto& f : out) {
      names.push_back(f.native() ? "C:" + f.function : f.function.str());
      if (f.native()) {
        EXPECT_FALSE(f.module.empty()) << f.function;
      } else {
        EXPECT_EQ(f.file, "/app/" + f.function + ".py");
        EXPECT_EQ(f.line, 7);
      }
    }
    return names;
  }

 private:
  std::deque<NativeFrame> frames_;
  std::vector<model::Frame> python_;
  std::vector<std::uint32_t> groups_;
  std::vector<std::uint64_t> sps_;
  std::vector<std::uint64_t> entries_;
};

using Names = std::vector<std::string>;

// Debian's 3.14 and 3.15: the loop has no name on the stack (a stripped, split or tail-calling
// interpreter), but each call's shim frame lies in the C frame running it.
TEST(Merge, LoopFramesFoundByTheirShimFramesWhateverTheirNames) {
  Stacks s;
  s.native("libc_read", "/lib/libc.so.6")
      .native("python3.14+0x448e2f", "", false)  // an opcode handler, no symbol
      .interp("PyObject_Vectorcall")
      .native("builtin_sorted_stand_in", "/lib/ext.so")
      .native("python3.14+0x598000", "", false)
      .interp("PyEval_EvalCode")
      .interp("Py_RunMain")
      .python("inner")
      .python("middle")
      .python("outer")
      .groups({1, 2});
  s.entries({s.inside(1), s.inside(4)});
  EXPECT_EQ(s.merged(),
            (Names{"C:libc_read", "inner", "C:builtin_sorted_stand_in", "middle", "outer"}));
}

// 3.15: a thread's outermost shim is its base frame, inside the thread state, not the C stack.
TEST(Merge, AShimOffTheStackRunningNoFrameKeepsStartUpOut) {
  Stacks s;
  s.native("work", "/lib/ext.so")
      .native("python3.15+0x4426eb", "", false)
      .interp("PyEval_EvalCode")
      .native("libc.so.6+0x29f40", "/lib/libc.so.6", false)
      .python("f")
      .python("<module>")
      .groups({2, 0});
  s.entries({s.inside(1), 0xc95190});
  EXPECT_EQ(s.merged(), (Names{"C:work", "f", "<module>"}));
}

TEST(Merge, ANamedLoopFrameHoldingNoShimRunsNoPythonFrame) {
  Stacks s;
  s.eval().eval().interp("Py_RunMain").python("only").groups({1});
  s.entries({s.inside(1)});
  EXPECT_EQ(s.merged(), (Names{"only"}));
  // An unwind whose frames hold none of the shims: the names decide, as before.
  Stacks t;
  t.native("work", "/lib/ext.so").eval().python("only").groups({1});
  t.entries({0x1000});
  EXPECT_EQ(t.merged(), (Names{"C:work", "only"}));
}

TEST(Classify, EvalLoopIncludingItsColdPart) {
  EXPECT_EQ(classify("_PyEval_EvalFrameDefault", true, true), Role::Eval);
  EXPECT_EQ(classify("_PyEval_EvalFrameDefault.cold", true, true), Role::Eval);
  EXPECT_EQ(classify("_PyEval_EvalFrameDefaultX", true, true), Role::Noise);
  EXPECT_EQ(classify("_PyEval_Vector", true, true), Role::Noise);
}

TEST(Classify, CallMachineryOnlyInsideTheInterpreter) {
  for (const char* f : {"PyObject_Call", "_PyObject_MakeTpCall", "_PyFunction_Vectorcall",
                        "method_vectorcall_O", "cfunction_call", "cfunction_vectorcall_FASTCALL",
                        "slot_tp_call", "Py_RunMain", "pymain_run_python", "thread_run"}) {
    EXPECT_EQ(classify(f, true, true), Role::Noise) << f;
    EXPECT_EQ(classify(f, true, false), Role::Other) << f;  // a library's own function
  }
}

TEST(Classify, BuiltinsAndWaitsAreKept) {
  for (const char* f : {"builtin_sorted", "list_sort_impl", "time_sleep", "sre_ucs1_match",
                        "take_gil", "PyThread_acquire_lock_timed", "zlib_compress"}) {
    EXPECT_EQ(classify(f, true, true), Role::Other) << f;
  }
}

TEST(Classify, StartupAnywhereAndUnnamedInterpreterCode) {
  EXPECT_EQ(classify("__libc_start_main", true, false), Role::Noise);
  EXPECT_EQ(classify("start_thread", true, false), Role::Noise);
  EXPECT_EQ(classify("clone3", true, false), Role::Noise);
  EXPECT_EQ(classify("python3.11+0x1a2b0", false, true), Role::Unnamed);
  EXPECT_EQ(classify("libz.so.1+0x3f20", false, false), Role::Other);
}

// 3.8-3.10: one evaluation call per Python frame.
TEST(Merge, OneEvalCallPerFrameUpTo310) {
  Stacks s;
  s.native("deflate_slow", "/lib/libz.so.1")
      .native("deflate", "/lib/libz.so.1")
      .native("zlib_compress_impl", "/py/lib-dynload/zlib.so")
      .interp("cfunction_vectorcall_O")
      .eval()
      .interp("_PyFunction_Vectorcall")
      .eval()
      .interp("_PyEval_EvalCodeWithName")
      .eval()
      .interp("PyRun_FileExFlags")
      .interp("Py_RunMain")
      .native("main", "/opt/python/bin/python3.9")
      .native("__libc_start_main")
      .native("_start", "/opt/python/bin/python3.9");
  s.python("compress_all").python("work").python("module").groups({1, 1, 1});
  EXPECT_EQ(s.merged(), (Names{"C:deflate_slow", "C:deflate", "C:zlib_compress_impl",
                               "compress_all", "work", "module"}));
}

TEST(Merge, CFunctionCallingBackIntoPythonStaysBetween) {
  Stacks s;
  s.eval()  // the key function
      .interp("_PyFunction_Vectorcall")
      .interp("list_sort_impl")
      .interp("method_vectorcall_FASTCALL_KEYWORDS")
      .interp("builtin_sorted")
      .interp("cfunction_vectorcall_FASTCALL_KEYWORDS")
      .eval()
      .eval();
  s.python("key").python("sort_them").python("module").groups({1, 1, 1});
  EXPECT_EQ(s.merged(),
            (Names{"key", "C:list_sort_impl", "C:builtin_sorted", "sort_them", "module"}));
}

// 3.11+: one evaluation call runs Python-to-Python calls inline, up to its entry frame.
TEST(Merge, OneEvalCallRunsSeveralFramesFrom311) {
  Stacks s;
  s.native("dapprof_native_call_back", "/ext/native_test.so")
      .eval()
      .interp("_PyEval_Vector")
      .native("qsort_r", "/lib/libc.so.6")
      .eval()
      .native("clone3");
  s.python("inner").python("middle").python("callback").python("outer").python("module");
  s.groups({3, 2});  // inner, middle and callback run by the first call; outer, module next
  EXPECT_EQ(s.merged(), (Names{"C:dapprof_native_call_back", "inner", "middle", "callback",
                               "C:qsort_r", "outer", "module"}));
}

// 3.11/3.12: a call whose frame has not started (or has just left) runs no visible frame.
TEST(Merge, EvalCallWithNoVisibleFrame) {
  Stacks s;
  s.eval().interp("_PyEval_Vector").native("helper", "/ext/m.so").eval();
  s.python("caller").python("module").groups({0, 2});
  EXPECT_EQ(s.merged(), (Names{"C:helper", "caller", "module"}));
}

TEST(Merge, MoreEvalCallsThanGroupsTheInnermostShowNothing) {
  Stacks s;
  s.native("PyErr_Occurred_helper", "/ext/m.so").eval().eval().eval();
  s.python("a").python("b").groups({1, 1});
  // The innermost eval frame is leaving a frame already popped from the Python stack.
  EXPECT_EQ(s.merged(), (Names{"C:PyErr_Occurred_helper", "a", "b"}));
  EXPECT_EQ(s.merged(true),
            (Names{"C:PyErr_Occurred_helper", "C:_PyEval_EvalFrameDefault", "a", "b"}));
}

TEST(Merge, UnwindStoppedEarlyLeftoverPythonFramesGoOutermost) {
  Stacks s;
  s.native("read").native("jit_code_without_unwind_info", "/tmp/jit.so").eval();
  s.python("a").python("b").python("c").groups({1, 1, 1});
  EXPECT_EQ(s.merged(), (Names{"C:read", "C:jit_code_without_unwind_info", "a", "b", "c"}));
}

TEST(Merge, NoEvalFrameAtAllPutsPythonAfterNatives) {
  Stacks s;
  s.native("epoll_wait");
  s.python("loop").python("module").groups({1, 1});
  EXPECT_EQ(s.merged(), (Names{"C:epoll_wait", "loop", "module"}));
}

TEST(Merge, KeepAllKeepsMachineryAndOuterFrames) {
  Stacks s;
  s.native("nanosleep")
      .interp("time_sleep")
      .interp("cfunction_vectorcall_O")
      .eval()
      .interp("pythread_wrapper")
      .native("start_thread")
      .native("clone3");
  s.python("sleeper").groups({1});
  EXPECT_EQ(s.merged(), (Names{"C:nanosleep", "C:time_sleep", "sleeper"}));
  EXPECT_EQ(s.merged(true), (Names{"C:nanosleep", "C:time_sleep", "C:cfunction_vectorcall_O",
                                   "sleeper", "C:pythread_wrapper", "C:start_thread", "C:clone3"}));
}

TEST(Merge, UnnamedInterpreterCodeKeptBetweenPythonFramesToo) {
  Stacks s;
  s.native("python3.11+0x1b2c40", "", false)  // e.g. sre_match in a stripped build
      .native("python3.11+0x1b0000", "", false)
      .eval()
      .native("python3.11+0x150000", "", false)  // e.g. builtin_sorted, or call machinery
      .eval();
  s.python("search").python("module").groups({1, 1});
  // The frame between the two Python frames may be the C caller of `search` (list.sort with a
  // key): dropping it would show `module` calling `search` directly.
  EXPECT_EQ(s.merged(), (Names{"C:python3.11+0x1b2c40", "C:python3.11+0x1b0000", "search",
                               "C:python3.11+0x150000", "module"}));
  EXPECT_EQ(s.merged(true), (Names{"C:python3.11+0x1b2c40", "C:python3.11+0x1b0000", "search",
                                   "C:python3.11+0x150000", "module"}));
}

TEST(Merge, ThreadWithoutPythonFramesKeepsItsNativeFrames) {
  Stacks s;
  s.native("pthread_cond_wait").interp("PyThread_acquire_lock_timed").native("start_thread");
  EXPECT_EQ(s.merged(), (Names{"C:pthread_cond_wait", "C:PyThread_acquire_lock_timed"}));
}

TEST(Merge, GroupsThatDoNotAddUpMeanOneFramePerCall) {
  Stacks s;
  s.eval().native("helper", "/ext/m.so").eval();
  s.python("a").python("b").groups({5});
  EXPECT_EQ(s.merged(), (Names{"a", "C:helper", "b"}));
}

TEST(Merge, EmptyNativeStackReturnsThePythonStack) {
  Stacks s;
  s.python("a").python("b").groups({2});
  EXPECT_EQ(s.merged(), (Names{"a", "b"}));
}

}  // namespace
}  // namespace dapprof::sampler::native
