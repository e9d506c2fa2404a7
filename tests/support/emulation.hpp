#pragma once
// Whether this test program runs under qemu-user, as the release-arm64 preset's unit tests do
// (tests/CMakeLists.txt). qemu-user implements neither process_vm_readv nor ptrace of another
// process, and its guest's code is not executable in the maps /proc shows: tests of unwinding a
// stopped process, or of naming this program's own code, cannot run there (docs/PACKAGING.md).
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>

namespace dapprof::testing_support {

inline bool under_qemu_user() {
  char from = 0, to = 0;
  iovec local{&to, 1}, remote{&from, 1};
  return ::process_vm_readv(::getpid(), &local, 1, &remote, 1, 0) < 0 && errno == ENOSYS;
}

}  // namespace dapprof::testing_support
