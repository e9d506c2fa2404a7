#include "adapter/task_reads.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <asio/post.hpp>
#include <chrono>
#include <thread>

#include "formats/async_tasks_json.hpp"
#include "sampler/sampler.hpp"

namespace dapprof::adapter {

TasksAnswer read_async_tasks(pid_t pid) {
  const auto began = std::chrono::steady_clock::now();
  auto process = sampler::PythonProcess::attach(pid, {});
  if (!process) return protocol::from_error(process.error());
  auto tasks = (*process)->async_tasks();
  // A read of a running program can be torn; another try usually succeeds (as dump --async).
  for (int attempt = 0; attempt < 10 && !tasks && tasks.code() == ErrorCode::TornRead; ++attempt)
    tasks = (*process)->async_tasks();
  if (!tasks) {
    // The process is Python (attach found its interpreter): NotPython here means that it has
    // not imported asyncio, which deserves an id of its own.
    auto error = protocol::from_error(tasks.error());
    if (tasks.code() == ErrorCode::NotPython) error.id = protocol::ProfilingErrorId::NoAsyncio;
    return error;
  }
  spdlog::info("asyncio tasks of pid {}: {} read in {} ms ({} torn)", pid, tasks->tasks.size(),
               std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - began)
                   .count(),
               tasks->torn);
  return formats::async_tasks_to_json(*tasks, (*process)->python_version());
}

std::shared_ptr<TaskReads> TaskReads::create(Executor strand, profiling::Sink& sink,
                                             ReadTasks read) {
  return std::make_shared<TaskReads>(strand, sink, std::move(read));
}

TaskReads::TaskReads(Executor strand, profiling::Sink& sink, ReadTasks read)
    : strand_(strand), sink_(&sink), read_(read ? std::move(read) : ReadTasks(&read_async_tasks)) {}

void TaskReads::read(protocol::Json request, pid_t target) {
  if (!sink_) return;
  waiting_.push_back({std::move(request), target});
  if (!reading_) start_next();
}

void TaskReads::close() {
  mailbox_->close();
  sink_ = nullptr;
  waiting_.clear();
}

void TaskReads::start_next() {
  if (waiting_.empty() || !sink_) return;
  const pid_t target = waiting_.front().target;
  std::vector<protocol::Json> requests;
  std::erase_if(waiting_, [&](Waiting& w) {
    if (w.target != target) return false;
    requests.push_back(std::move(w.request));
    return true;
  });
  reading_ = true;
  // Detached: a session that ends meanwhile must not wait for the read. What it posts holds this
  // weakly.
  std::thread([weak = weak_from_this(), mailbox = mailbox_, read = read_, target,
               requests = std::move(requests)]() mutable {
    auto answer = read(target);
    mailbox->post([weak, requests = std::move(requests), answer = std::move(answer)]() mutable {
      if (auto self = weak.lock()) self->on_read(std::move(requests), std::move(answer));
    });
  }).detach();
}

void TaskReads::on_read(std::vector<protocol::Json> requests, TasksAnswer answer) {
  reading_ = false;
  if (!sink_) return;
  for (const auto& request : requests) {
    if (const auto* error = std::get_if<protocol::ProtocolError>(&answer)) {
      sink_->respond_error(request, *error);
    } else {
      sink_->respond(request, std::get<protocol::Json>(answer));
    }
  }
  start_next();
}

}  // namespace dapprof::adapter
