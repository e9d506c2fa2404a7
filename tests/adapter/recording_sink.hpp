#pragma once
// A profiling::Sink that records what the client would receive, in order, for the adapter's unit
// tests: responses as {"response": seq, "success", "body" | "id", "message"}, events as
// {"event", "body"}.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>

#include "adapter/profiling/sink.hpp"

namespace dapprof::adapter::test {

using namespace std::chrono_literals;
using protocol::Json;

// What the client would receive, in order; `backlog` pretends the client reads slowly.
class RecordingSink final : public profiling::Sink {
 public:
  void respond(const Json& request, Json body) override {
    push({{"response", request["seq"]}, {"success", true}, {"body", std::move(body)}});
  }
  void respond_error(const Json& request, const protocol::ProtocolError& error) override {
    push({{"response", request["seq"]},
          {"success", false},
          {"id", static_cast<int>(error.id)},
          {"message", error.message}});
  }
  void send_event(std::string_view event, Json body) override {
    push({{"event", event}, {"body", std::move(body)}});
  }
  bool client_open() override { return true; }
  std::size_t client_queued_bytes() override { return 0; }
  std::size_t client_unsent_in_kernel() override { return backlog.load(); }

  // The next message, waiting up to `timeout`.
  std::optional<Json> next(std::chrono::milliseconds timeout = 5s) {
    std::unique_lock lock(mutex_);
    if (!arrived_.wait_for(lock, timeout, [&] { return !messages_.empty(); })) return std::nullopt;
    Json m = std::move(messages_.front());
    messages_.pop_front();
    return m;
  }
  // The next message that is not profilingData (whose samples are added to `samples`).
  std::optional<Json> next_answer(std::uint64_t* samples = nullptr) {
    while (auto m = next()) {
      if (m->value("event", "") != "profilingData") return m;
      if (samples) *samples += (*m)["body"]["sampleCount"].get<std::uint64_t>();
    }
    return std::nullopt;
  }
  bool quiet(std::chrono::milliseconds for_how_long = 300ms) { return !next(for_how_long); }

  std::atomic<std::size_t> backlog{0};

 private:
  void push(Json m) {
    {
      std::lock_guard lock(mutex_);
      messages_.push_back(std::move(m));
    }
    arrived_.notify_all();
  }
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::deque<Json> messages_;
};

}  // namespace dapprof::adapter::test
