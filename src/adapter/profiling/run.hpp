#pragma once
// Live profiling in one debug session: the startProfiling / stopProfiling / exportProfile
// requests, the profilingData stream and profilingStopped, as one state machine on the session's
// strand.
//
//   Idle --start--> Attaching --attached--> Running --stop/exit/error/end--> Ended
//                       |  \--failed--> Idle                                   |
//                       \--end--> Idle                          start: Attaching (the ended
//                                                               run is dropped)
//
// Attaching reads the target's memory and symbol tables, which can take a noticeable time, so it
// runs on a thread of its own and the session stays responsive; a stopProfiling that arrives
// meanwhile is answered right after the startProfiling. Batches are closed by a timer on the
// strand and sent while the client's connection has room (DAP traffic first; a slow client makes
// the backlog merge or drop samples). An ended run stays exportable, and one stopProfiling may
// still collect it (write its file), until the next start.
#include <sys/types.h>

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <asio/strand.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "adapter/profiling/recording.hpp"
#include "adapter/profiling/sink.hpp"
#include "adapter/strand_mailbox.hpp"
#include "protocol/messages.hpp"
#include "sampler/sampler.hpp"

namespace dapprof::adapter::profiling {

// How a run starts sampling: sampler::Sampler::start, or a fake in tests. Blocking (it attaches);
// called on a thread of the run's own.
using StartSampler = std::function<Result<std::unique_ptr<sampler::Sampler>>(
    pid_t, const sampler::SamplerOptions&, sampler::Sampler::OnSnapshot, sampler::Sampler::OnStop)>;

struct Config {
  std::size_t max_pending_samples = protocol::kDefaultMaxPendingSamples;
  StartSampler start_sampler;  // empty: the real sampler
};

enum class State { Idle, Attaching, Running, Ended };
std::string_view to_string(State state);

class Run : public std::enable_shared_from_this<Run> {
 public:
  using Executor = asio::strand<asio::io_context::executor_type>;

  // The sink must outlive the run, or close() must be called first.
  static std::shared_ptr<Run> create(Executor strand, Sink& sink, Config config = {});
  Run(Executor strand, Sink& sink, Config config);
  ~Run();

  // The requests, with validated arguments. `target` is the debuggee or the `pid` argument,
  // already checked to be in the session's process tree.
  void start(Json request, const protocol::StartProfilingArguments& arguments, pid_t target);
  void stop(Json request, const protocol::StopProfilingArguments& arguments);
  void export_profile(const Json& request, const protocol::ExportProfileArguments& arguments);

  // The session is ending (disconnect, the debug adapter gone): a running run ends with
  // profilingStopped for `reason`; an attach is abandoned and its requests answered.
  void end(protocol::StoppedReason reason);
  // The client's connection has drained: queued data may go.
  void client_drained() { send_data(false); }
  // The session is over: sampling stops, the sink is never used again.
  void close();

  State state() const { return state_; }

 private:
  void on_attached(std::uint64_t generation, Result<std::unique_ptr<sampler::Sampler>> sampler);
  void on_sampler_ended(std::uint64_t generation);
  void finish_sampling();  // Running -> Ended: joins the sampler, queues the last batch
  void answer_stop(const Json& request, const protocol::StopProfilingArguments& arguments);
  void send_data(bool everything);
  void arm_flush();
  void arm_retry();

  Executor strand_;
  // Where the attach thread posts its result (see StrandMailbox): closed by close().
  std::shared_ptr<StrandMailbox> mailbox_ = StrandMailbox::open(strand_);
  Sink* sink_;
  Config config_;
  State state_ = State::Idle;
  std::uint64_t generation_ = 0;  // of the current run: stale callbacks of an earlier one drop
  pid_t target_ = 0;
  protocol::StartProfilingArguments arguments_;
  std::shared_ptr<Recording> recording_;
  std::unique_ptr<sampler::Sampler> sampler_;
  std::optional<Json> pending_start_;  // Attaching: answered once attached
  std::optional<Json> deferred_stop_;  // Attaching: a stopProfiling that came meanwhile
  std::optional<protocol::StopProfilingArguments> deferred_stop_arguments_;
  bool collected_ = false;  // Ended: a stopProfiling has answered with the summary
  asio::steady_timer flush_timer_;
  asio::steady_timer retry_timer_;
  bool retry_armed_ = false;
};

}  // namespace dapprof::adapter::profiling
