// ProcessMemory where process_vm_readv is refused: this binary's main installs a seccomp filter
// that makes it fail with the errno of --deny=EPERM (a container's seccomp profile) or
// --deny=ENOSYS (qemu-user), so every read goes through /proc/PID/mem, against real children.
#include <gtest/gtest.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "child.hpp"
#include "deny_vm_readv.hpp"
#include "sampler/process/maps.hpp"
#include "sampler/process/memory.hpp"

namespace dapprof::sampler::process {
namespace {

using test::Child;

std::uint8_t expected_byte(std::size_t i) { return static_cast<std::uint8_t>((i * 7 + 3) % 251); }

// Two pages of known bytes at `start`, nothing mapped right after them.
struct MappingEndChild {
  Child child{{test::system_python(), test::target_script("mapping_end.py")}};
  Address start = 0;
  std::size_t size = 0;
  MappingEndChild() {
    const auto line = child.read_line();
    if (!line) return;
    std::istringstream(*line) >> start >> size;
  }
  Address end() const { return start + size; }
};

TEST(MemoryFallback, ProcessVmReadvIsRefusedHere) {
  std::uint64_t v = 0;
  iovec local{&v, sizeof v}, remote{&v, sizeof v};
  errno = 0;
  EXPECT_EQ(process_vm_readv(getpid(), &local, 1, &remote, 1, 0), -1);
  EXPECT_TRUE(errno == EPERM || errno == ENOSYS) << std::strerror(errno);
}

TEST(MemoryFallback, ReadsThroughProcMemOnePreadPerChunk) {
  MappingEndChild c;
  ASSERT_NE(c.start, 0u);
  ProcessMemory mem(c.child.pid());
  std::vector<std::uint8_t> got(c.size);
  auto s = mem.read(c.start, got.data(), got.size());  // both pages
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(read_path(), ReadPath::ProcMem);
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], expected_byte(i)) << "byte " << i;

  std::array<std::uint8_t, 16> a{}, b{};
  const std::array<ProcessMemory::Chunk, 2> chunks{
      {{c.start + 10, a.data(), a.size()}, {c.start + 5000, b.data(), b.size()}}};
  const auto before = mem.syscalls();
  ASSERT_TRUE(mem.read_many(chunks));
  EXPECT_EQ(mem.syscalls(), before + 2);
  for (std::size_t i = 0; i < 16; ++i) {
    EXPECT_EQ(a[i], expected_byte(10 + i));
    EXPECT_EQ(b[i], expected_byte(5000 + i));
  }
}

TEST(MemoryFallback, ReadsToTheEndOfAMappingAndNotPastIt) {
  MappingEndChild c;
  ASSERT_NE(c.start, 0u);
  // What the test relies on: the page after the mapping is not mapped (read now, by the host).
  auto maps = read_maps(c.child.pid());
  ASSERT_TRUE(maps) << maps.message();
  for (const auto& m : *maps) ASSERT_FALSE(c.end() >= m.start && c.end() < m.end) << m.path;

  ProcessMemory mem(c.child.pid());
  std::array<std::uint8_t, 100> tail{};
  auto s = mem.read(c.end() - tail.size(), tail.data(), tail.size());
  ASSERT_TRUE(s) << s.message();
  for (std::size_t i = 0; i < tail.size(); ++i)
    ASSERT_EQ(tail[i], expected_byte(c.size - tail.size() + i)) << "byte " << i;

  // The last 50 bytes of the mapping and 50 past its end: the kernel reads the first part, then
  // fails; a short read is an error, as with process_vm_readv.
  auto across = mem.read(c.end() - 50, tail.data(), tail.size());
  ASSERT_FALSE(across);
  EXPECT_EQ(across.code(), ErrorCode::Generic);
  EXPECT_NE(across.message().find("not mapped"), std::string::npos) << across.message();

  std::uint64_t v = 0;
  auto past = mem.read(c.end(), &v, sizeof v);
  ASSERT_FALSE(past);
  EXPECT_EQ(past.code(), ErrorCode::Generic);

  // read_each: the chunks before and after the bad one are read all the same.
  std::array<std::uint8_t, 8> x{}, y{}, z{};
  const std::array<ProcessMemory::Chunk, 3> chunks{{{c.start, x.data(), x.size()},
                                                    {c.end() - 4, y.data(), y.size()},
                                                    {c.start + 8, z.data(), z.size()}}};
  std::vector<char> failed;
  mem.read_each(chunks, failed);
  EXPECT_EQ(failed, (std::vector<char>{0, 1, 0}));
  EXPECT_EQ(x[0], expected_byte(0));
  EXPECT_EQ(z[0], expected_byte(8));
}

TEST(MemoryFallback, UnmappedAddressIsAGenericError) {
  MappingEndChild c;
  ASSERT_NE(c.start, 0u);
  ProcessMemory mem(c.child.pid());
  std::uint64_t v = 0;
  auto s = mem.read(8, &v, sizeof v);  // page 0 is never mapped
  ASSERT_FALSE(s);
  EXPECT_EQ(s.code(), ErrorCode::Generic) << s.message();
  auto high = mem.read(0xffff'ffff'ffff'fff0, &v, sizeof v);  // beyond any file offset
  ASSERT_FALSE(high);
  EXPECT_EQ(high.code(), ErrorCode::Generic) << high.message();

  std::array<std::uint8_t, 16> a{}, b{};
  const std::array<ProcessMemory::Chunk, 2> chunks{
      {{c.start, a.data(), a.size()}, {8, b.data(), b.size()}}};
  auto many = mem.read_many(chunks);
  ASSERT_FALSE(many);
  EXPECT_EQ(many.code(), ErrorCode::Generic);
  EXPECT_NE(many.message().find("0x8"), std::string::npos) << many.message();
  EXPECT_EQ(mem.read_prefix(chunks), 1u);
}

TEST(MemoryFallback, ExitedProcessIsProcessExited) {
  MappingEndChild c;
  ASSERT_NE(c.start, 0u);
  ProcessMemory mem(c.child.pid());
  std::uint64_t v = 0;
  ASSERT_TRUE(mem.read(c.start, &v, sizeof v));  // the file is open from here on
  ::kill(c.child.pid(), SIGKILL);
  c.child.wait_zombie();
  auto zombie = mem.read(c.start, &v, sizeof v);
  ASSERT_FALSE(zombie);
  EXPECT_EQ(zombie.code(), ErrorCode::ProcessExited) << zombie.message();
  c.child.wait();
  auto reaped = mem.read(c.start, &v, sizeof v);
  ASSERT_FALSE(reaped);
  EXPECT_EQ(reaped.code(), ErrorCode::ProcessExited) << reaped.message();
  // A reader that never opened the file before the exit.
  auto fresh = ProcessMemory(c.child.pid()).read(c.start, &v, sizeof v);
  ASSERT_FALSE(fresh);
  EXPECT_EQ(fresh.code(), ErrorCode::ProcessExited) << fresh.message();
}

TEST(MemoryFallback, PermissionDeniedNamesBothWaysAndTheFix) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to switch to another user";
  MappingEndChild c;
  ASSERT_NE(c.start, 0u);
  // A forked reader that drops to user nobody may not read a root process, either way.
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  const pid_t reader = fork();
  ASSERT_GE(reader, 0);
  if (reader == 0) {
    close(out[0]);
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(10);
    std::uint64_t v = 0;
    auto s = ProcessMemory(c.child.pid()).read(c.start, &v, sizeof v);
    if (s) _exit(11);
    if (s.code() != ErrorCode::PermissionDenied) _exit(12);
    const std::string& m = s.message();
    if (write(out[1], m.data(), m.size()) < 0) _exit(13);
    _exit(0);
  }
  close(out[1]);
  std::string message;
  char buf[512];
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;) message.append(buf, std::size_t(n));
  close(out[0]);
  int status = 0;
  ASSERT_EQ(waitpid(reader, &status, 0), reader);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << "10: cannot drop privileges, 11: read succeeded, "
                                       "12: wrong code";
  EXPECT_NE(message.find("CAP_SYS_PTRACE"), std::string::npos) << message;
  EXPECT_NE(message.find("process_vm_readv"), std::string::npos) << message;
  EXPECT_NE(message.find("/proc/" + std::to_string(c.child.pid()) + "/mem"), std::string::npos)
      << message;
}

}  // namespace
}  // namespace dapprof::sampler::process

// --deny=EPERM or --deny=ENOSYS (EPERM if absent): the errno process_vm_readv fails with.
int main(int argc, char** argv) {
  int err = EPERM;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--deny=ENOSYS") {
      err = ENOSYS;
    } else if (arg != "--deny=EPERM") {
      args.push_back(argv[i]);
    }
  }
  if (const std::string why = dapprof::test::deny_process_vm_readv(err); !why.empty()) {
    std::fprintf(stderr, "cannot install the seccomp filter: %s\n", why.c_str());
    return 2;
  }
  int n = static_cast<int>(args.size());
  args.push_back(nullptr);  // argv's end, as gtest expects it
  testing::InitGoogleTest(&n, args.data());
  return RUN_ALL_TESTS();
}
