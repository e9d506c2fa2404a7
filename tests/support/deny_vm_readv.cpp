// deny_vm_readv EPERM|ENOSYS PROGRAM [ARG...]: runs PROGRAM with process_vm_readv failing with
// that errno (see deny_vm_readv.hpp), e.g. dapprof as under a seccomp profile or qemu-user.
#include "deny_vm_readv.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s EPERM|ENOSYS PROGRAM [ARG...]\n", argv[0]);
    return 2;
  }
  const std::string name = argv[1];
  const int err = name == "EPERM" ? EPERM : name == "ENOSYS" ? ENOSYS : 0;
  if (err == 0) {
    std::fprintf(stderr, "%s: unknown errno %s (EPERM or ENOSYS)\n", argv[0], argv[1]);
    return 2;
  }
  if (const std::string why = dapprof::test::deny_process_vm_readv(err); !why.empty()) {
    std::fprintf(stderr, "%s: %s\n", argv[0], why.c_str());
    return 2;
  }
  ::execv(argv[2], argv + 2);
  std::fprintf(stderr, "%s: cannot run %s: %s\n", argv[0], argv[2], std::strerror(errno));
  return 127;
}
