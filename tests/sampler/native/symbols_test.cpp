// Symbolizer, ElfSymbols, LineTable and ModuleMap on this test program itself (built with debug
// information), and Unwinder on a child process stopped in known functions.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <thread>

#include "sampler/native/elf_symbols.hpp"
#include "sampler/native/module_map.hpp"
#include "sampler/native/symbolizer.hpp"
#include "sampler/native/unwinder.hpp"
#include "sampler/process/pause.hpp"
#include "support/emulation.hpp"

namespace native_test {

// From the signature's line: without optimisation the prologue is attributed to it.
constexpr int kMarkerFirstLine = __LINE__ + 1;
__attribute__((noinline)) int marker(int x) {
  volatile int sum = 0;
  for (int i = 0; i < x; ++i) sum = sum + i * 3;
  return sum;
}
constexpr int kMarkerLastLine = __LINE__ - 1;

volatile bool g_stop = false;

// Not instrumented by a sanitizer: its checks would be the stopped child's innermost frames.
#define NATIVE_TEST_PLAIN __attribute__((noinline, no_sanitize("address", "thread", "undefined")))

NATIVE_TEST_PLAIN void spin_leaf() {
  while (!g_stop) {
    asm volatile("" ::: "memory");
  }
}

NATIVE_TEST_PLAIN void spin_outer(int depth) {
  if (depth > 0) {
    spin_outer(depth - 1);
  } else {
    spin_leaf();
  }
  asm volatile("" ::: "memory");  // not a tail call: keeps this frame on the stack
}

}  // namespace native_test

namespace dapprof::sampler::native {
namespace {

std::uint64_t address_of(int (*f)(int)) { return reinterpret_cast<std::uint64_t>(f); }

TEST(Symbolizer, DemanglesCxxNamesAndLeavesCNamesAlone) {
  EXPECT_EQ(Symbolizer::demangle("_ZN11native_test6markerEi"), "native_test::marker(int)");
  EXPECT_EQ(Symbolizer::demangle("PyObject_Call"), "PyObject_Call");
  EXPECT_EQ(Symbolizer::demangle("_Znot_really_mangled"), "_Znot_really_mangled");
}

TEST(Symbolizer, NamesAFunctionOfThisProgramWithItsSourceLine) {
  if (testing_support::under_qemu_user())
    GTEST_SKIP() << "under qemu-user, whose maps show this program's code as not executable";
  ModuleMap modules(getpid());
  ASSERT_TRUE(modules.load().ok());
  Symbolizer symbolizer(modules, {});
  // An address inside marker(), past its first instruction.
  const std::uint64_t inside = address_of(&native_test::marker) + 4;
  const auto frames = symbolizer.resolve(std::vector<std::uint64_t>{inside});
  ASSERT_EQ(frames.size(), 1u);
  const NativeFrame& f = *frames[0];
  EXPECT_EQ(f.function, "native_test::marker(int)");
  EXPECT_TRUE(f.symbolized);
  EXPECT_FALSE(f.interpreter);
  EXPECT_EQ(f.role, Role::Other);
  char exe[4096] = {};
  ASSERT_GT(readlink("/proc/self/exe", exe, sizeof exe - 1), 0);
  EXPECT_EQ(f.module, exe);
  // A build naming its sources relative to the build directory (a compiler cache's) records
  // `dir/../..`: the name is the file's own, with no such detour.
  EXPECT_EQ(f.file, SYMBOLS_TEST_SOURCE);
  EXPECT_TRUE(std::filesystem::exists(f.file)) << f.file;
  EXPECT_GE(f.line, native_test::kMarkerFirstLine);
  EXPECT_LE(f.line, native_test::kMarkerLastLine);
}

TEST(Symbolizer, InterpreterFilesAndUnknownAddresses) {
  ModuleMap modules(getpid());
  ASSERT_TRUE(modules.load().ok());
  char exe[4096] = {};
  ASSERT_GT(readlink("/proc/self/exe", exe, sizeof exe - 1), 0);
  Symbolizer symbolizer(modules, {exe});
  const auto frames = symbolizer.resolve(
      std::vector<std::uint64_t>{address_of(&native_test::marker), 0x10});  // 0x10: unmapped
  EXPECT_TRUE(frames[0]->interpreter);
  EXPECT_EQ(frames[1]->function, "0x10");
  EXPECT_TRUE(frames[1]->module.empty());
  EXPECT_FALSE(frames[1]->symbolized);
}

TEST(ElfSymbols, LibcFunctionsByTheirPlainNames) {
  ModuleMap modules(getpid());
  ASSERT_TRUE(modules.load().ok());
  Symbolizer symbolizer(modules, {});
  const auto frames = symbolizer.resolve(
      std::vector<std::uint64_t>{reinterpret_cast<std::uint64_t>(&::getpid) + 1});
  EXPECT_EQ(frames[0]->function, "getpid");
  EXPECT_NE(frames[0]->module.find("libc"), std::string::npos) << frames[0]->module;
}

TEST(ModuleMap, KeepsOnlyExecutableMappingsSorted) {
  std::vector<process::MapEntry> entries{
      {0x3000, 0x4000, 0x2000, "r-xp", "/lib/b.so"},
      {0x1000, 0x2000, 0, "r--p", "/lib/a.so"},
      {0x2000, 0x3000, 0x1000, "r-xp", "/lib/a.so"},
      {0x5000, 0x6000, 0, "rw-p", ""},
  };
  const auto exec = ModuleMap::executable(entries);
  ASSERT_EQ(exec.size(), 2u);
  EXPECT_EQ(exec[0].path, "/lib/a.so");
  EXPECT_EQ(exec[0].offset, 0x1000u);
  EXPECT_EQ(exec[1].start, 0x3000u);
}

// A child of this test stopped inside spin_leaf() <- spin_outer() x3: its native stack names
// them innermost first.
TEST(Unwinder, UnwindsAStoppedChildThroughKnownFunctions) {
  if (testing_support::under_qemu_user())
    GTEST_SKIP() << "under qemu-user, which cannot ptrace another process";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(30);  // never outlive a failed test
    native_test::spin_outer(3);
    _exit(0);
  }
  struct Reaper {
    pid_t pid;
    ~Reaper() {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  } reaper{child};
  std::this_thread::sleep_for(std::chrono::milliseconds(100));

  ModuleMap modules(child);
  ASSERT_TRUE(modules.load().ok());
  auto unwinder = Unwinder::create(modules);
  ASSERT_TRUE(unwinder.ok()) << unwinder.message();
  Symbolizer symbolizer(modules, {});
  for (int round = 0; round < 3; ++round) {  // the second and third use the caches
    Result<NativeStack> stack = Error{};
    {
      auto paused = process::PausedProcess::pause(child);
      ASSERT_TRUE(paused.ok()) << paused.message();
      stack = (*unwinder)->unwind(child);
    }  // resumed before symbolizing, as the sampler does
    ASSERT_TRUE(stack.ok()) << stack.message();
    const auto frames = symbolizer.resolve(stack->addresses);
    std::vector<std::string> names;
    for (const auto* f : frames) names.push_back(f->function);
    ASSERT_GE(names.size(), 5u);
    EXPECT_EQ(names[0], "native_test::spin_leaf()");
    for (int i = 1; i <= 4; ++i) EXPECT_EQ(names[i], "native_test::spin_outer(int)") << i;
    EXPECT_FALSE(stack->truncated);
  }
}

TEST(Unwinder, AThreadThatIsNotStoppedIsAnErrorNotACrash) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(30);
    native_test::spin_outer(0);
    _exit(0);
  }
  struct Reaper {
    pid_t pid;
    ~Reaper() {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  } reaper{child};
  ModuleMap modules(child);
  ASSERT_TRUE(modules.load().ok());
  auto unwinder = Unwinder::create(modules);
  ASSERT_TRUE(unwinder.ok());
  auto stack = (*unwinder)->unwind(child);  // not ptrace-stopped by us
  EXPECT_FALSE(stack.ok());
}

}  // namespace
}  // namespace dapprof::sampler::native
