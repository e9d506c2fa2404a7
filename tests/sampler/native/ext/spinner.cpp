// The C++ part of the test extension: a member function whose demangled name the tests expect,
// "dapprof_test::Spinner::spin(double)".
#include <chrono>

namespace dapprof_test {

struct Spinner {
  __attribute__((noinline)) static unsigned long spin(double seconds);
};

unsigned long Spinner::spin(double seconds) {
  using Clock = std::chrono::steady_clock;
  volatile unsigned long n = 0;
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < end) {
    for (unsigned long i = 0; i < 20000; ++i) n = n + i * 2;
  }
  return n;
}

}  // namespace dapprof_test

extern "C" unsigned long dapprof_spin_cpp(double seconds) {
  return dapprof_test::Spinner::spin(seconds) + 1;  // + 1: a call, not a tail jump
}
