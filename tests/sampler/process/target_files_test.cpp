// Opening a target's mapped files where the target's own root has them.
#include "sampler/process/target_files.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sampler/process/maps.hpp"

namespace dapprof::sampler::process {
namespace {

TEST(TargetFiles, TheTargetsRootFirstWhenItHoldsTheMappedFile) {
  // This test's own executable, as its maps name it: reachable both ways, /proc/PID/root first.
  auto maps = read_maps(getpid());
  ASSERT_TRUE(maps) << maps.message();
  const MapEntry* exe = nullptr;
  for (const auto& m : *maps)
    if (m.path.ends_with("/sampler_process_tests") && m.inode != 0) exe = &m;
  ASSERT_NE(exe, nullptr);
  struct stat st {};
  ASSERT_EQ(::stat(exe->path.c_str(), &st), 0);
  EXPECT_EQ(static_cast<std::uint64_t>(st.st_ino), exe->inode);
  const auto via_root = fmt::format("/proc/{}/root{}", getpid(), exe->path);
  EXPECT_EQ(target_file_path(getpid(), exe->path, exe->inode), via_root);
  EXPECT_EQ(target_file_path(getpid(), exe->path, 0), via_root);
}

TEST(TargetFiles, WithoutAMatchingInodeTheTargetsOwnViewWins) {
  // A mapped file that exists (here) only outside the target's root is taken from outside; a
  // path that exists nowhere is returned as is, for the error message.
  EXPECT_EQ(target_file_path(getpid(), "/nonexistent/libpython3.99.so", 42),
            "/nonexistent/libpython3.99.so");
  // The inode decides between two existing files: /bin/sh is not the file with inode 1.
  EXPECT_EQ(target_file_path(getpid(), "/bin/sh", 1), fmt::format("/proc/{}/root/bin/sh", getpid()))
      << "no candidate matches: the target's own view is the better guess";
}

}  // namespace
}  // namespace dapprof::sampler::process
