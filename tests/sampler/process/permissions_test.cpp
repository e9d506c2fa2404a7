#include "sampler/process/permissions.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace dapprof::sampler::process {
namespace {

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// An unprivileged dapprof (uid 1000) facing a target whose uids and flag are set by each test.
PermissionFacts ordinary_user() {
  PermissionFacts f;
  f.our_uid = 1000;
  f.target_uid = f.target_euid = f.target_suid = 1000;
  f.target_dumpable = true;
  return f;
}

void expect_container_advice(const std::string& m) {
  EXPECT_TRUE(has(m, "docker run --cap-add SYS_PTRACE")) << m;
  EXPECT_TRUE(has(m, "securityContext.capabilities.add: [\"SYS_PTRACE\"]")) << m;
}

TEST(Permissions, AnotherUsersProcessNamesTheUserAndEveryFix) {
  auto f = ordinary_user();
  f.target_uid = f.target_euid = f.target_suid = 0;
  const auto m = permission_denied_message(1234, "read the memory of", f);
  EXPECT_TRUE(
      m.starts_with("permission denied to read the memory of process 1234 (dapprof runs "
                    "as uid 1000)."))
      << m;
  EXPECT_TRUE(has(m, "belongs to another user (uid 0)")) << m;
  EXPECT_TRUE(has(m, "same user as the target or as root")) << m;
  EXPECT_TRUE(has(m, "setcap cap_sys_ptrace+ep")) << m;
  EXPECT_FALSE(has(m, "dumpable")) << m;
  expect_container_advice(m);
}

TEST(Permissions, AnotherUsersProcessIsNamedSoUnderYamaToo) {
  // Lowering ptrace_scope would not help with another user's process.
  auto f = ordinary_user();
  f.target_uid = f.target_euid = f.target_suid = 1001;
  f.yama_ptrace_scope = 1;
  const auto m = permission_denied_message(7, "read the memory of", f);
  EXPECT_TRUE(has(m, "another user (uid 1001)")) << m;
  EXPECT_FALSE(has(m, "ptrace_scope")) << m;
}

TEST(Permissions, SetuidTargetShowsItsMixedIds) {
  auto f = ordinary_user();
  f.target_euid = f.target_suid = 0;
  const auto m = permission_denied_message(7, "read the memory of", f);
  EXPECT_TRUE(has(m, "another user (uid 0; its real, effective and saved uids are 1000, 0 and 0)"))
      << m;
}

TEST(Permissions, NonDumpableProcessOfTheSameUserNeedsCapSysPtrace) {
  // Running as the target's user is no fix here: it already is.
  auto f = ordinary_user();
  f.target_dumpable = false;
  for (const auto scope : {std::optional<int>{}, std::optional<int>{0}, std::optional<int>{1}}) {
    f.yama_ptrace_scope = scope;
    const auto m = permission_denied_message(99, "read the memory map of", f);
    EXPECT_TRUE(has(m, "The process is not dumpable (it called prctl(PR_SET_DUMPABLE, 0)")) << m;
    EXPECT_TRUE(has(m, "even of the same user")) << m;
    EXPECT_TRUE(has(m, "Run dapprof as root or grant it CAP_SYS_PTRACE")) << m;
    EXPECT_FALSE(has(m, "same user as the target")) << m;
    EXPECT_FALSE(has(m, "ptrace_scope")) << m;
    expect_container_advice(m);
  }
}

TEST(Permissions, YamaIsBlamedForTheSameUsersDumpableProcess) {
  auto f = ordinary_user();
  f.yama_ptrace_scope = 1;
  auto m = permission_denied_message(5, "pause (ptrace)", f);
  EXPECT_TRUE(has(m, "kernel.yama.ptrace_scope is 1")) << m;
  EXPECT_TRUE(has(m, "sudo sysctl kernel.yama.ptrace_scope=0")) << m;
  f.yama_ptrace_scope = 2;
  m = permission_denied_message(5, "pause (ptrace)", f);
  EXPECT_TRUE(has(m, "kernel.yama.ptrace_scope is 2")) << m;
  EXPECT_TRUE(has(m, "sudo sysctl kernel.yama.ptrace_scope=1")) << m;
  // With CAP_SYS_PTRACE, scopes 1 and 2 let dapprof through: something else refused.
  f.we_have_cap_sys_ptrace = true;
  m = permission_denied_message(5, "pause (ptrace)", f);
  EXPECT_FALSE(has(m, "ptrace_scope")) << m;
  EXPECT_TRUE(has(m, "security module")) << m;
}

TEST(Permissions, YamaScopeThreeStopsEveryone) {
  auto f = ordinary_user();
  f.target_uid = f.target_euid = f.target_suid = 0;
  f.we_are_root = f.we_have_cap_sys_ptrace = true;
  f.our_uid = 0;
  f.yama_ptrace_scope = 3;
  const auto m = permission_denied_message(5, "read the memory of", f);
  EXPECT_TRUE(has(m, "kernel.yama.ptrace_scope is 3 (ptrace disabled until reboot)")) << m;
  EXPECT_FALSE(has(m, "another user")) << m;
}

TEST(Permissions, RootWithoutCapSysPtraceIsToldAboutContainers) {
  auto f = ordinary_user();
  f.our_uid = 0;
  f.we_are_root = true;
  f.target_dumpable = false;
  const auto m = permission_denied_message(5, "read the memory of", f);
  EXPECT_TRUE(has(m, "dapprof runs as root but without CAP_SYS_PTRACE")) << m;
  EXPECT_FALSE(has(m, "another user")) << m;
  expect_container_advice(m);
}

TEST(Permissions, UnknownTargetGetsTheGeneralAdvice) {
  PermissionFacts f;
  f.our_uid = 1000;
  const auto m = permission_denied_message(5, "read the memory of", f);
  EXPECT_TRUE(has(m, "Run dapprof as the same user as the target or as root")) << m;
  EXPECT_TRUE(has(m, "CAP_SYS_PTRACE")) << m;
  expect_container_advice(m);
}

// A child that sets its dumpable flag (as a user other than root, when the test runs as root:
// root's own /proc entries are root's either way), then waits to be killed.
class FlaggedChild {
 public:
  explicit FlaggedChild(bool dumpable) {
    int ready[2];
    if (::pipe(ready) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::close(ready[0]);
      if (::geteuid() == 0 &&
          (::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0))
        ::_exit(1);
      // (Changing uids clears the flag by itself; set it explicitly either way.)
      if (::prctl(PR_SET_DUMPABLE, dumpable ? 1 : 0, 0, 0, 0) != 0) ::_exit(1);
      const char byte = 'r';
      if (::write(ready[1], &byte, 1) != 1) ::_exit(1);
      for (;;) ::pause();
    }
    ::close(ready[1]);
    char byte = 0;
    ok_ = pid_ > 0 && ::read(ready[0], &byte, 1) == 1;
    ::close(ready[0]);
  }
  FlaggedChild(const FlaggedChild&) = delete;
  FlaggedChild& operator=(const FlaggedChild&) = delete;
  ~FlaggedChild() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  bool ok() const { return ok_; }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  bool ok_ = false;
};

TEST(Permissions, FactsOfRealProcesses) {
  const auto self = permission_facts(::getpid());
  EXPECT_EQ(self.our_uid, ::getuid());
  EXPECT_EQ(self.we_are_root, ::geteuid() == 0);
  ASSERT_TRUE(self.target_uid && self.target_euid && self.target_suid);
  EXPECT_EQ(*self.target_uid, ::getuid());
  EXPECT_EQ(*self.target_euid, ::geteuid());
  EXPECT_EQ(self.yama_ptrace_scope.has_value(),
            std::filesystem::exists("/proc/sys/kernel/yama/ptrace_scope"));

  const uid_t child_uid = ::geteuid() == 0 ? 65534 : ::geteuid();
  FlaggedChild dumpable(true), non_dumpable(false);
  ASSERT_TRUE(dumpable.ok() && non_dumpable.ok());
  const auto d = permission_facts(dumpable.pid());
  const auto n = permission_facts(non_dumpable.pid());
  EXPECT_EQ(d.target_euid, child_uid);
  EXPECT_EQ(n.target_euid, child_uid);
  EXPECT_EQ(d.target_dumpable, true);
  EXPECT_EQ(n.target_dumpable, false);
  const auto m = permission_denied_message(non_dumpable.pid(), "read the memory of");
  if (::geteuid() != 0) {
    EXPECT_TRUE(has(m, "The process is not dumpable")) << m;
  }

  const auto gone = permission_facts(-1);
  EXPECT_FALSE(gone.target_uid);
  EXPECT_FALSE(gone.target_dumpable);
}

}  // namespace
}  // namespace dapprof::sampler::process
