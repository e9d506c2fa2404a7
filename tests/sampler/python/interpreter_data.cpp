#include "interpreter_data.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>

namespace dapprof::sampler::python::testing {
namespace {

// Runs argv (no shell) and returns its standard output.
std::string run(const std::vector<std::string>& args) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  const pid_t child = fork();
  if (child == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(fds[1]);
  std::string out;
  char buf[65536];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error("dump_line_tables.py failed");
  }
  return out;
}

}  // namespace

const nlohmann::json& interpreter_data() {
  static const nlohmann::json data = [] {
    auto j =
        nlohmann::json::parse(run({"/usr/bin/python3", DAPPROF_TEST_DIR "/dump_line_tables.py"}));
    for (const auto& m : j["missing"])
      std::printf("interpreter %s missing: skipped\n", m.get<std::string>().c_str());
    return j;
  }();
  return data;
}

std::vector<unsigned char> from_hex(const std::string& hex) {
  std::vector<unsigned char> out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<unsigned char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

}  // namespace dapprof::sampler::python::testing
