// ProcessMemory against a real Python child that exposes a buffer of known contents.
#include "sampler/process/memory.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "child.hpp"
#include "sampler/process/maps.hpp"
#include "sampler/process/sample_reads.hpp"

namespace dapprof::sampler::process {
namespace {

using test::Child;

std::uint8_t expected_byte(std::size_t i) { return static_cast<std::uint8_t>((i * 7 + 3) % 251); }

struct BufferChild {
  Child child{{test::system_python(), test::target_script("buffer.py"), "20000"}};
  Address buffer = 0;
  std::size_t size = 0;
  Address text = 0;
  BufferChild() {
    const auto line = child.read_line();
    if (!line) return;
    std::istringstream(*line) >> buffer >> size >> text;
  }
};

TEST(ProcessMemory, ReadsKnownBufferOfChild) {
  BufferChild c;
  ASSERT_NE(c.buffer, 0u);
  ASSERT_EQ(c.size, 20000u);
  ProcessMemory mem(c.child.pid());
  std::vector<std::uint8_t> got(c.size);
  auto s = mem.read(c.buffer, got.data(), got.size());  // spans several pages
  ASSERT_TRUE(s) << s.message();
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], expected_byte(i)) << "byte " << i;

  auto one = mem.read<std::uint32_t>(c.buffer + 100);
  ASSERT_TRUE(one) << one.message();
  std::uint32_t want = 0;
  for (int i = 3; i >= 0; --i)
    want = (want << 8) | expected_byte(100 + static_cast<std::size_t>(i));
  EXPECT_EQ(*one, want);

  auto text = mem.read_cstring(c.text);
  ASSERT_TRUE(text) << text.message();
  EXPECT_EQ(*text, "dapprof says hello");
  auto truncated = mem.read_cstring(c.text, 5);
  EXPECT_FALSE(truncated);
  auto exact = mem.read_cstring(c.text, text->size());
  ASSERT_TRUE(exact) << exact.message();
  EXPECT_EQ(*exact, *text);
  auto prefix = mem.read_cstring_prefix(c.text, 5);
  ASSERT_TRUE(prefix) << prefix.message();
  EXPECT_EQ(*prefix, "dappr");
  auto whole = mem.read_cstring_prefix(c.text, 200);
  ASSERT_TRUE(whole) << whole.message();
  EXPECT_EQ(*whole, *text);
}

TEST(ProcessMemory, ReadManyUsesOneSystemCall) {
  BufferChild c;
  ASSERT_NE(c.buffer, 0u);
  ProcessMemory mem(c.child.pid());
  std::array<std::uint8_t, 16> a{}, b{}, d{};
  const std::array<ProcessMemory::Chunk, 3> chunks{{{c.buffer, a.data(), a.size()},
                                                    {c.buffer + 5000, b.data(), b.size()},
                                                    {c.buffer + 19984, d.data(), d.size()}}};
  const auto before = mem.syscalls();
  auto s = mem.read_many(chunks);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(mem.syscalls(), before + 1);
  for (std::size_t i = 0; i < 16; ++i) {
    EXPECT_EQ(a[i], expected_byte(i));
    EXPECT_EQ(b[i], expected_byte(5000 + i));
    EXPECT_EQ(d[i], expected_byte(19984 + i));
  }
}

TEST(ProcessMemory, UnmappedAddressIsAGenericError) {
  BufferChild c;
  ASSERT_NE(c.buffer, 0u);
  ProcessMemory mem(c.child.pid());
  std::uint64_t v = 0;
  auto s = mem.read(8, &v, sizeof v);  // page 0 is never mapped
  ASSERT_FALSE(s);
  EXPECT_EQ(s.code(), ErrorCode::Generic);

  // A batch whose last chunk is unmapped is a short read: an error, not a partial success.
  std::array<std::uint8_t, 16> a{}, b{};
  const std::array<ProcessMemory::Chunk, 2> chunks{
      {{c.buffer, a.data(), a.size()}, {8, b.data(), b.size()}}};
  auto many = mem.read_many(chunks);
  ASSERT_FALSE(many);
  EXPECT_EQ(many.code(), ErrorCode::Generic);
  EXPECT_NE(many.message().find("0x8"), std::string::npos) << many.message();
}

TEST(ProcessMemory, ExitedProcessIsProcessExited) {
  BufferChild c;
  ASSERT_NE(c.buffer, 0u);
  ProcessMemory mem(c.child.pid());
  // Killed but not reaped (a zombie), then reaped (the PID is gone).
  ::kill(c.child.pid(), SIGKILL);
  c.child.wait_zombie();
  std::uint64_t v = 0;
  auto zombie = mem.read(c.buffer, &v, sizeof v);
  ASSERT_FALSE(zombie);
  EXPECT_EQ(zombie.code(), ErrorCode::ProcessExited) << zombie.message();
  c.child.wait();
  auto reaped = mem.read(c.buffer, &v, sizeof v);
  ASSERT_FALSE(reaped);
  EXPECT_EQ(reaped.code(), ErrorCode::ProcessExited) << reaped.message();
}

TEST(ProcessMemory, UnprivilegedReaderGetsPermissionDeniedWithTheFix) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to switch to another user";
  BufferChild c;
  ASSERT_NE(c.buffer, 0u);
  // A forked reader that drops to user nobody may not read a root process.
  const pid_t reader = fork();
  ASSERT_GE(reader, 0);
  if (reader == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(10);
    std::uint64_t v = 0;
    auto s = ProcessMemory(c.child.pid()).read(c.buffer, &v, sizeof v);
    if (s) _exit(11);
    if (s.code() != ErrorCode::PermissionDenied) _exit(12);
    if (s.message().find("CAP_SYS_PTRACE") == std::string::npos) _exit(13);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(reader, &status, 0), reader);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10: cannot drop privileges, 11: read succeeded, "
                                       "12: wrong code, 13: message lacks the fix";
}

TEST(Maps, ListsTheBufferMapping) {
  BufferChild c;
  ASSERT_NE(c.buffer, 0u);
  auto maps = read_maps(c.child.pid());
  ASSERT_TRUE(maps) << maps.message();
  bool found = false;
  for (const auto& m : *maps) {
    if (c.buffer >= m.start && c.buffer < m.end) {
      found = true;
      EXPECT_EQ(m.perms.substr(0, 2), "rw");
    }
  }
  EXPECT_TRUE(found);
}

TEST(Maps, NonExistentProcessIsNoSuchProcess) {
  auto maps = read_maps(0x7ffffff0);  // above any pid_max
  ASSERT_FALSE(maps);
  EXPECT_EQ(maps.code(), ErrorCode::NoSuchProcess);
}

TEST(Maps, AProcessThatExecsIsNotTakenForExited) {
  // /proc/PID/maps opened before an exec and read after it reads empty, as a zombie's does
  // (seen: a starting interpreter behind a launcher taken for exited). The map of a process
  // exec'ing itself 150 times, read as fast as it goes, must always be its map.
  Child child({test::system_python(), "-S", test::target_script("reexec.py"), "150"});
  std::atomic<bool> done{false};
  std::thread watcher([&] { done = child.read_line(std::chrono::seconds(120)).has_value(); });
  int reads = 0;
  std::string failure;
  while (!done && failure.empty()) {
    auto maps = read_maps(child.pid());
    if (!maps) {
      failure = maps.message();
    } else if (maps->empty()) {
      failure = "an empty map";
    }
    ++reads;
  }
  child.kill_and_wait(SIGKILL);  // ends the watcher's read if the loop ended first
  watcher.join();
  EXPECT_EQ(failure, "") << "at read " << reads;
  EXPECT_GT(reads, 150) << "the maps were not read across the execs";
}

// SampleReads: what one sample read is fetched at the start of the next in one system call.
namespace sample_reads {

struct ThreeReads {
  std::array<std::uint8_t, 16> a{}, b{}, d{};
  Status read(const ProcessMemory& mem, Address buffer) {
    if (auto s = mem.read(buffer + 100, a.data(), a.size()); !s) return s;
    if (auto s = mem.read(buffer + 9000, b.data(), b.size()); !s) return s;
    return mem.read(buffer + 9040, d.data(), d.size());
  }
  void expect(std::size_t a_at, std::size_t b_at, std::size_t d_at) const {
    for (std::size_t i = 0; i < 16; ++i) {
      EXPECT_EQ(a[i], expected_byte(a_at + i));
      EXPECT_EQ(b[i], expected_byte(b_at + i));
      EXPECT_EQ(d[i], expected_byte(d_at + i));
    }
  }
};

// A buffer child read through a ProcessMemory that uses a SampleReads.
struct Sampled {
  BufferChild c;
  ProcessMemory mem{c.child.pid()};
  SampleReads reads;
  Sampled() { mem.use(&reads); }
};

TEST(SampleReads, TheNextSampleIsFetchedInOneCallAndServedFromIt) {
  Sampled t;
  ASSERT_NE(t.c.buffer, 0u);
  auto& [c, mem, reads] = t;

  reads.begin(mem);  // nothing planned yet: every read goes to the process
  ThreeReads first;
  auto before = mem.syscalls();
  ASSERT_TRUE(first.read(mem, c.buffer));
  EXPECT_EQ(mem.syscalls(), before + 3);
  reads.end();
  EXPECT_FALSE(reads.complete());  // its reads came later than its (empty) fetch
  // Reads 40 bytes apart are one region; 9 KB apart, two.
  const auto plan = reads.plan();
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0], std::make_pair(c.buffer + 100, std::size_t{16}));
  EXPECT_EQ(plan[1], std::make_pair(c.buffer + 9000, std::size_t{56}));

  before = mem.syscalls();
  reads.begin(mem);
  ThreeReads second;
  ASSERT_TRUE(second.read(mem, c.buffer));
  EXPECT_EQ(mem.syscalls(), before + 1);  // the fetch, and nothing more
  second.expect(100, 9000, 9040);
  EXPECT_TRUE(reads.complete());
  // A read the plan does not cover still goes to the process.
  std::uint32_t other = 0;
  ASSERT_TRUE(mem.read(c.buffer + 15000, &other, sizeof other));
  EXPECT_EQ(mem.syscalls(), before + 2);
  EXPECT_FALSE(reads.complete());
  reads.end();
  EXPECT_EQ(reads.plan().size(), 3u);
}

TEST(SampleReads, AnUnmappedRegionIsDroppedAndTheRestServed) {
  Sampled t;
  ASSERT_NE(t.c.buffer, 0u);
  auto& [c, mem, reads] = t;
  reads.begin(mem);
  std::uint64_t v = 0;
  EXPECT_FALSE(mem.read(8, &v, sizeof v));  // page 0: planned all the same, like a freed frame
  ThreeReads first;
  ASSERT_TRUE(first.read(mem, c.buffer));
  reads.end();
  ASSERT_EQ(reads.plan().size(), 3u);

  reads.begin(mem);  // the unmapped region comes first and stops the transfer: fetched again
  const auto before = mem.syscalls();
  ThreeReads second;
  ASSERT_TRUE(second.read(mem, c.buffer));
  EXPECT_EQ(mem.syscalls(), before);  // all served from the fetch
  second.expect(100, 9000, 9040);
  EXPECT_FALSE(mem.read(8, &v, sizeof v));  // still an error, read from the process again
  reads.end();
}

TEST(SampleReads, TheRegionHoldingAReadIsFoundWholeAndAnotherAfterThePlanChanges) {
  Sampled t;
  ASSERT_NE(t.c.buffer, 0u);
  auto& [c, mem, reads] = t;
  reads.begin(mem);
  ThreeReads first;
  ASSERT_TRUE(first.read(mem, c.buffer));
  reads.end();
  reads.begin(mem);
  Address start = 0;
  // Inside the second region (9000..9056): all of it, wherever in it the read falls.
  auto region = mem.cached_region(c.buffer + 9040, 16, start);
  ASSERT_EQ(region.size(), 56u);
  EXPECT_EQ(start, c.buffer + 9000);
  for (std::size_t i = 0; i < region.size(); ++i)
    EXPECT_EQ(static_cast<std::uint8_t>(region[i]), expected_byte(9000 + i));
  // The first region, after the second was the last found; then a read across a region's end.
  region = mem.cached_region(c.buffer + 104, 8, start);
  ASSERT_EQ(region.size(), 16u);
  EXPECT_EQ(start, c.buffer + 100);
  EXPECT_TRUE(mem.cached_region(c.buffer + 110, 8, start).empty());
  EXPECT_TRUE(mem.cached_region(c.buffer + 9050, 8, start).empty());
  reads.end();
  // A plan of the one region now at a different place: the one remembered is not served from.
  reads.begin(mem);
  std::array<std::uint8_t, 32> e{};
  ASSERT_TRUE(mem.read(c.buffer + 5000, e.data(), e.size()));
  reads.end();
  reads.begin(mem);
  EXPECT_TRUE(mem.cached_region(c.buffer + 104, 8, start).empty());
  region = mem.cached_region(c.buffer + 5000, 32, start);
  ASSERT_EQ(region.size(), 32u);
  EXPECT_EQ(static_cast<std::uint8_t>(region[0]), expected_byte(5000));
  reads.end();
  EXPECT_TRUE(mem.cached_region(c.buffer + 5000, 32, start).empty()) << "outside a sample";
}

TEST(SampleReads, OutsideASampleNothingIsCachedOrPlanned) {
  Sampled t;
  ASSERT_NE(t.c.buffer, 0u);
  auto& [c, mem, reads] = t;
  ThreeReads r;
  const auto before = mem.syscalls();
  ASSERT_TRUE(r.read(mem, c.buffer));
  ASSERT_TRUE(r.read(mem, c.buffer));
  EXPECT_EQ(mem.syscalls(), before + 6);
  reads.begin(mem);
  reads.end();
  EXPECT_TRUE(reads.plan().empty());
}

}  // namespace sample_reads

}  // namespace
}  // namespace dapprof::sampler::process
