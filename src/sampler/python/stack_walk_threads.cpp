// The thread list half of the stack walker: each thread state of an interpreter and its top frame,
// from which walk() starts.
#include <cstdint>

#include "sampler/python/stack_walk.hpp"

namespace dapprof::sampler::python {

RawThread StackWalker::parse_thread(Address t, const std::byte* buf) const {
  const Layout& l = objects_.layout();
  RawThread rt;
  rt.tstate = t;
  rt.next = load_at<Address>(buf, l.tstate_next);
  rt.thread_id = load_at<std::uint64_t>(buf, l.tstate_thread_id);
  if (l.tstate_native_thread_id != kAbsent) {
    rt.native_thread_id = load_at<std::uint64_t>(buf, l.tstate_native_thread_id);
    if (tids_ && rt.native_thread_id <= static_cast<std::uint64_t>(INT32_MAX))
      rt.native_thread_id =
          static_cast<std::uint64_t>(tids_->host(static_cast<pid_t>(rt.native_thread_id)));
  }
  if (l.tstate_frame != kAbsent) {
    rt.top_frame = load_at<Address>(buf, l.tstate_frame);
  } else if (l.tstate_current_frame != kAbsent) {
    rt.top_frame = load_at<Address>(buf, l.tstate_current_frame);
  } else {
    rt.top_frame = load_at<Address>(buf, l.tstate_cframe);  // see read_tops()
  }
  return rt;
}

Status StackWalker::read_tstate(Address interp, Address t, std::vector<std::byte>& buf) const {
  const Layout& l = objects_.layout();
  buf.resize(l.tstate_size);
  if (!plausible(t)) return torn("implausible thread state address");
  if (auto s = objects_.memory().read(t, buf.data(), buf.size()); !s) return as_torn(s.error());
  if (load_at<Address>(buf.data(), l.tstate_interp) != interp) {
    return torn("thread state of another interpreter");
  }
  return Ok{};
}

Status StackWalker::read_tops(std::vector<RawThread>& threads,
                              const std::function<bool(const RawThread&)>& top_unneeded) const {
  const Layout& l = objects_.layout();
  if (l.tstate_cframe == kAbsent || l.tstate_current_frame != kAbsent) return Ok{};
  // 3.11-3.12: one batched read of every thread's cframe->current_frame.
  std::vector<process::ProcessMemory::Chunk> chunks;
  std::vector<Address> frames(threads.size());
  for (std::size_t i = 0; i < threads.size(); ++i) {
    if (threads[i].top_frame == 0) continue;  // no cframe: thread not running Python yet
    if (top_unneeded && top_unneeded(threads[i])) {
      threads[i].top_read = false;
      continue;
    }
    chunks.push_back({threads[i].top_frame + l.cframe_current_frame, &frames[i], sizeof(Address)});
  }
  if (auto s = objects_.memory().read_many(chunks); !s) return as_torn(s.error());
  for (std::size_t i = 0; i < threads.size(); ++i) threads[i].top_frame = frames[i];
  return Ok{};
}

Result<std::vector<RawThread>> StackWalker::threads(
    Address interp, Address head, const std::function<bool(const RawThread&)>& top_unneeded) const {
  std::vector<RawThread> out;
  std::vector<std::byte> buf;
  // A list made circular by a torn read is caught without remembering every node (Brent's
  // method: a marker moved to the current node at every power of two steps).
  Address marker = 0;
  std::size_t steps = 0, power = 1;
  for (Address t = head; t != 0;) {
    if (out.size() >= kMaxThreads || t == marker) return torn("thread list cycle");
    if (++steps == power) {
      marker = t;
      power *= 2;
      steps = 0;
    }
    if (auto s = read_tstate(interp, t, buf); !s) return s.error();
    out.push_back(parse_thread(t, buf.data()));
    t = out.back().next;
  }
  if (auto s = read_tops(out, top_unneeded); !s) return s.error();
  return out;
}

Result<RawThread> StackWalker::thread(Address interp, Address tstate) const {
  std::vector<std::byte> buf;
  if (auto s = read_tstate(interp, tstate, buf); !s) return s.error();
  std::vector<RawThread> one{parse_thread(tstate, buf.data())};
  if (auto s = read_tops(one, {}); !s) return s.error();
  return one.front();
}

}  // namespace dapprof::sampler::python
