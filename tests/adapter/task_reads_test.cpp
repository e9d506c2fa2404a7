// The asyncTasks reads (adapter/task_reads.hpp) on a real strand, with a reader the test holds
// back (the real one attaches to a process: test_async_tasks.py drives it): the strand stays free
// while a read runs, one read runs at a time, requests for one process that wait share a read,
// errors are answered as errors, and nothing reaches a closed session.
#include "adapter/task_reads.hpp"

#include <gtest/gtest.h>

#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>

#include "recording_sink.hpp"
#include "session_harness.hpp"

namespace dapprof::adapter {
namespace {

using namespace std::chrono_literals;
using protocol::Json;

using test::RecordingSink;

// A reader that records which process each read is for and waits until the test releases it.
class HeldReader {
 public:
  TasksAnswer read(pid_t pid) {
    std::unique_lock lock(mutex_);
    reads_.push_back(pid);
    changed_.notify_all();
    changed_.wait(lock, [&] { return released_ > 0; });
    --released_;
    ++finished_;
    changed_.notify_all();
    if (pid == 666)
      return protocol::ProtocolError{protocol::ProfilingErrorId::NoAsyncio, "no asyncio"};
    return Json{{"tasks", Json::array()}, {"pid", pid}};
  }
  void release() {
    std::lock_guard lock(mutex_);
    ++released_;
    changed_.notify_all();
  }
  // Lets every read that began return, and waits until they have.
  void drain() {
    std::unique_lock lock(mutex_);
    released_ += static_cast<int>(reads_.size());
    changed_.notify_all();
    changed_.wait_for(lock, 5s, [&] { return finished_ == reads_.size(); });
  }
  // Waits until `n` reads have begun (up to `timeout`); their pids.
  std::vector<pid_t> begun(std::size_t n, std::chrono::milliseconds timeout = 5s) {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, timeout, [&] { return reads_.size() >= n; });
    return reads_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<pid_t> reads_;
  int released_ = 0;
  std::size_t finished_ = 0;
};

class TaskReadsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    reads_ = TaskReads::create(strand_, sink_, [this](pid_t pid) { return reader_.read(pid); });
  }
  void TearDown() override {
    on_strand([&] { reads_->close(); });
    // The reads run on detached threads, which post their answer once read() returns: let them
    // end before the strand and the reader go.
    reader_.drain();
    std::this_thread::sleep_for(50ms);
    on_strand([] {});
  }
  template <typename F>
  void on_strand(F f) {
    std::promise<void> done;
    asio::post(strand_, [&] {
      f();
      done.set_value();
    });
    done.get_future().wait();
  }
  void read(int seq, pid_t pid) {
    on_strand([&] { reads_->read(Json{{"seq", seq}, {"command", "asyncTasks"}}, pid); });
  }

  test::IoThread io_;
  asio::strand<asio::io_context::executor_type> strand_{asio::make_strand(io_.context())};
  RecordingSink sink_;
  HeldReader reader_;
  std::shared_ptr<TaskReads> reads_;
};

TEST_F(TaskReadsTest, TheStrandStaysFreeWhileAReadRunsAndTheAnswerComesBack) {
  read(1, 4242);
  ASSERT_EQ(reader_.begun(1), std::vector<pid_t>{4242});
  // The read is held: the strand still runs other work, and nothing was answered.
  on_strand([] {});
  EXPECT_FALSE(sink_.next(100ms));
  reader_.release();
  auto answer = sink_.next();
  ASSERT_TRUE(answer);
  EXPECT_EQ((*answer)["response"], 1);
  EXPECT_EQ((*answer)["body"]["pid"], 4242);
}

TEST_F(TaskReadsTest, OneReadAtATimeAndWaitingRequestsForOneProcessShareTheNext) {
  read(1, 4242);
  ASSERT_EQ(reader_.begun(1).size(), 1u);
  read(2, 4242);  // during the read: waits for the next one
  read(3, 666);
  read(4, 4242);  // shares request 2's read
  EXPECT_EQ(reader_.begun(2, 200ms).size(), 1u) << "a second read began while the first ran";
  reader_.release();
  EXPECT_EQ((*sink_.next())["response"], 1);
  EXPECT_EQ(reader_.begun(2), (std::vector<pid_t>{4242, 4242}));
  reader_.release();
  auto second = sink_.next(), fourth = sink_.next();
  ASSERT_TRUE(second && fourth);
  EXPECT_EQ((*second)["response"], 2);
  EXPECT_EQ((*fourth)["response"], 4);
  EXPECT_EQ(reader_.begun(3), (std::vector<pid_t>{4242, 4242, 666}));
  reader_.release();
  auto error = sink_.next();
  ASSERT_TRUE(error);
  EXPECT_EQ((*error)["response"], 3);
  EXPECT_EQ((*error)["id"], static_cast<int>(protocol::ProfilingErrorId::NoAsyncio));
  EXPECT_EQ((*error)["message"], "no asyncio");
  EXPECT_FALSE(sink_.next(100ms));
}

TEST_F(TaskReadsTest, NothingReachesAClosedSession) {
  read(1, 4242);
  ASSERT_EQ(reader_.begun(1).size(), 1u);
  read(2, 4242);
  on_strand([&] { reads_->close(); });
  reader_.release();
  reader_.release();
  EXPECT_FALSE(sink_.next(300ms));
  EXPECT_EQ(reader_.begun(2, 200ms).size(), 1u) << "a waiting request was read after the close";
}

}  // namespace
}  // namespace dapprof::adapter
