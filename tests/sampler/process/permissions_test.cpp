#include "sampler/process/permissions.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace dapprof::sampler::process {
namespace {

TEST(Permissions, MessageNamesEveryFix) {
  const auto m = permission_denied_message(1234, "read the memory of");
  EXPECT_NE(m.find("process 1234"), std::string::npos) << m;
  EXPECT_NE(m.find("read the memory of"), std::string::npos) << m;
  EXPECT_NE(m.find("CAP_SYS_PTRACE"), std::string::npos) << m;
  EXPECT_NE(m.find("same user"), std::string::npos) << m;
  EXPECT_NE(m.find("docker run --cap-add SYS_PTRACE"), std::string::npos) << m;
  EXPECT_NE(m.find("securityContext.capabilities.add: [\"SYS_PTRACE\"]"), std::string::npos) << m;
  // The Yama setting is named only where the kernel has it.
  const bool yama = std::filesystem::exists("/proc/sys/kernel/yama/ptrace_scope");
  EXPECT_EQ(m.find("ptrace_scope") != std::string::npos, yama) << m;
}

}  // namespace
}  // namespace dapprof::sampler::process
