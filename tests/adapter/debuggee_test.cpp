// Which process debugpy's `process` event names: the command-line check, and the resolution in
// dapprof's own PID namespace against this test process (the container cases run real
// namespaces in test_containers.py).
#include "adapter/debuggee.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include "sampler/process/pid_namespace.hpp"

namespace dapprof::adapter {
namespace {

TEST(Debuggee, CommandLineRunsTheProgramDebugpyNames) {
  const std::vector<std::string> script{"/usr/bin/python3", "-X", "dev", "/app/prog.py", "--fast"};
  EXPECT_TRUE(runs_program(script, "/app/prog.py"));
  EXPECT_TRUE(runs_program(script, "prog.py"));  // sys.argv[0] as given, relative
  EXPECT_FALSE(runs_program(script, "/app/other.py"));
  EXPECT_FALSE(runs_program(script, ""));
  // debugpy's own command line before the program's.
  EXPECT_TRUE(
      runs_program({"python3", "-m", "debugpy", "--listen", "5678", "prog.py"}, "/srv/prog.py"));
  // -m: sys.argv[0] is the module's file.
  const std::vector<std::string> module{"python3", "-m", "pkg.tool"};
  EXPECT_TRUE(runs_program(module, "/usr/lib/python3/dist-packages/pkg/tool.py"));
  EXPECT_TRUE(runs_program(module, "/srv/pkg/tool/__main__.py"));
  EXPECT_FALSE(runs_program(module, "/srv/pkg/other.py"));
  EXPECT_TRUE(runs_program({"python3", "-c", "print(1)"}, "-c"));
}

TEST(Debuggee, InItsOwnNamespaceTheReportedPidIsTheProcessIfItRunsTheProgram) {
  const auto self = sampler::process::command_line(::getpid());
  ASSERT_FALSE(self.empty());
  const UpstreamPeer unknown;  // no child, no connection: only this namespace can be meant
  auto found = resolve_debuggee({::getpid(), self.front()}, unknown);
  ASSERT_TRUE(found) << found.message();
  EXPECT_EQ(*found, ::getpid());

  auto other = resolve_debuggee({::getpid(), "/srv/app.py"}, unknown);
  ASSERT_FALSE(other);
  EXPECT_EQ(other.code(), ErrorCode::NoSuchProcess);
  EXPECT_NE(other.message().find("runs another program"), std::string::npos) << other.message();
  EXPECT_NE(other.message().find("\"processId\""), std::string::npos) << other.message();

  // dapprof's own adapter (profile-only) reports this machine's pids.
  UpstreamPeer own;
  own.host_pids = true;
  EXPECT_EQ(*resolve_debuggee({::getpid(), ""}, own), ::getpid());
}

TEST(Debuggee, ProcessIdMustBeTheReportedProcessRunningTheProgram) {
  const auto self = sampler::process::command_line(::getpid());
  ASSERT_FALSE(self.empty());
  auto ok = check_named_debuggee(::getpid(), {::getpid(), self.front()});
  ASSERT_TRUE(ok) << ok.message();
  EXPECT_EQ(*ok, ::getpid());
  auto other_pid = check_named_debuggee(::getpid(), {::getpid() + 1, self.front()});
  ASSERT_FALSE(other_pid);
  EXPECT_NE(other_pid.message().find("not the debuggee"), std::string::npos);
  EXPECT_FALSE(check_named_debuggee(::getpid(), {::getpid(), "/srv/app.py"}));
}

}  // namespace
}  // namespace dapprof::adapter
