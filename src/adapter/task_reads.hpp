#pragma once
// The asyncTasks request: the asyncio tasks of the debuggee (or of one of its descendants), read
// once and answered with the document of `dapprof dump --async --json`
// (formats/async_tasks_json.hpp). A read attaches to the process and pauses its threads, a few
// hundred ms for a thousand tasks, so it runs on a thread of its own and posts the answer back to
// the session's strand: the session, and every other one, stays responsive meanwhile. One read
// runs at a time per session (two would contend for the ptrace stop); requests for a process that
// come while one is waiting share its read, requests that come during a read get the next one.
#include <sys/types.h>

#include <asio/io_context.hpp>
#include <asio/strand.hpp>
#include <functional>
#include <memory>
#include <variant>
#include <vector>

#include "adapter/profiling/sink.hpp"
#include "adapter/strand_mailbox.hpp"
#include "protocol/envelope.hpp"

namespace dapprof::adapter {

// The tasks document of a process, or the error to answer with.
using TasksAnswer = std::variant<protocol::Json, protocol::ProtocolError>;
// Reads a process's tasks: blocking, called on a thread of its own. Tests pass a fake.
using ReadTasks = std::function<TasksAnswer(pid_t)>;

// The real reader: attaches with the sampler, reads (again after a torn read), renders.
TasksAnswer read_async_tasks(pid_t pid);

class TaskReads : public std::enable_shared_from_this<TaskReads> {
 public:
  using Executor = asio::strand<asio::io_context::executor_type>;

  // The sink must outlive this, or close() must be called first. An empty `read`: the real one.
  static std::shared_ptr<TaskReads> create(Executor strand, profiling::Sink& sink,
                                           ReadTasks read = {});
  TaskReads(Executor strand, profiling::Sink& sink, ReadTasks read);

  // Answers `request` with the tasks of `target`, already checked to be in the session.
  void read(protocol::Json request, pid_t target);
  // The session is over: waiting requests are dropped, the sink is never used again.
  void close();
  ~TaskReads() { mailbox_->close(); }

 private:
  struct Waiting {
    protocol::Json request;
    pid_t target;
  };
  void start_next();
  void on_read(std::vector<protocol::Json> requests, TasksAnswer answer);

  Executor strand_;
  // Where the reading thread posts its answer (see StrandMailbox): closed by close().
  std::shared_ptr<StrandMailbox> mailbox_ = StrandMailbox::open(strand_);
  profiling::Sink* sink_;
  ReadTasks read_;
  std::vector<Waiting> waiting_;
  bool reading_ = false;
};

}  // namespace dapprof::adapter
