#pragma once
// How a detached thread (an attach, a read of the tasks) hands its result back to a session's
// strand. The thread must not hold a strand of its own: one that outlives the session, and at
// exit the io_context, would destroy its copy after the strand's service is gone. It holds this
// instead, which the session closes when it ends; what is posted after that is dropped in the
// thread (a sampler nobody takes is stopped by its destructor there).
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/strand.hpp>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

namespace dapprof::adapter {

class StrandMailbox {
 public:
  using Executor = asio::strand<asio::io_context::executor_type>;

  static std::shared_ptr<StrandMailbox> open(Executor strand) {
    return std::make_shared<StrandMailbox>(std::move(strand));
  }
  explicit StrandMailbox(Executor strand) : strand_(std::move(strand)) {}

  // Posts `handler` to the strand unless closed; false if it was dropped.
  template <typename Handler>
  bool post(Handler&& handler) {
    std::lock_guard lock(mutex_);
    if (!strand_) return false;
    asio::post(*strand_, std::forward<Handler>(handler));
    return true;
  }
  // On the strand, when its owner ends.
  void close() {
    std::lock_guard lock(mutex_);
    strand_.reset();
  }

 private:
  std::mutex mutex_;
  std::optional<Executor> strand_;
};

}  // namespace dapprof::adapter
