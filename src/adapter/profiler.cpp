#include "adapter/profiler.hpp"

namespace dapprof::adapter {
namespace {

class UnavailableProfiler final : public Profiler {
 public:
  Result<Json> start(const protocol::StartProfilingArguments&, pid_t, EventSink) override {
    return Error{
        "live sampling is not available in this build of dapprof; debugging works as usual. "
        "Use `dapprof record` on the debuggee's PID instead, or upgrade dapprof.",
        ErrorCode::Generic};
  }
  Result<Json> stop(const protocol::StopProfilingArguments&) override {
    return Error{"live sampling is not available in this build of dapprof", ErrorCode::Generic};
  }
  void on_session_end() override {}
};

}  // namespace

std::unique_ptr<Profiler> make_unavailable_profiler() {
  return std::make_unique<UnavailableProfiler>();
}

}  // namespace dapprof::adapter
