#pragma once
// Reading the thread list and each thread's Python stack, per version family:
//   3.8-3.10  PyThreadState.frame -> PyFrameObject chain (f_back), line from f_lasti
//   3.11-3.12 PyThreadState.cframe->current_frame -> _PyInterpreterFrame chain (previous),
//             line from prev_instr
//   3.13+     PyThreadState.current_frame -> _PyInterpreterFrame chain, line from instr_ptr
//             (3.14+: f_executable is a tagged _PyStackRef)
// Frames not yet started (incomplete) and the C-stack shim frames of 3.12+ are skipped, as
// CPython's own traceback code does.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "common/result.hpp"
#include "model/frame.hpp"
#include "sampler/process/namespace_tids.hpp"
#include "sampler/python/code_cache.hpp"
#include "sampler/python/frame_reader.hpp"
#include "sampler/python/instrumented.hpp"
#include "sampler/python/objects.hpp"
#include "sampler/python/opcodes.hpp"
#include "sampler/sampler.hpp"

namespace dapprof::sampler::python {

inline constexpr std::size_t kMaxFrames = 4096;
inline constexpr std::size_t kMaxThreads = 4096;

struct RawThread {
  Address tstate = 0;
  Address next = 0;             // the next thread state in the list
  std::uint64_t thread_id = 0;  // pthread_t, as threading.get_ident()
  // Linux TID (3.11+; 0 before), the host's (see map_tids); 0 also for a thread that has exited.
  std::uint64_t native_thread_id = 0;
  Address top_frame = 0;
  bool top_read = true;  // false: left unread at the caller's word (see StackWalker::threads)
};

class StackWalker {
 public:
  // nonblocking: the target runs while we read, so inconsistencies are TornRead errors; when
  // paused, a walk longer than kMaxFrames is truncated instead.
  StackWalker(const Objects& objects, CodeCache& codes, bool nonblocking,
              LineNumbers lines = LineNumbers::Current)
      : objects_(objects),
        codes_(codes),
        nonblocking_(nonblocking),
        lines_(lines),
        frame_reader_(objects) {}

  // The process's TIDs as the host knows them: RawThread::native_thread_id is mapped through
  // `tids` (which must outlive the walker) from the one the thread state holds, its PID
  // namespace's. Null (the default): taken as read.
  void map_tids(process::NamespaceTids* tids) { tids_ = tids; }
  process::NamespaceTids* tids() const { return tids_; }
  // record --opcodes: every Python frame walk() returns gets its instruction, named from `set`
  // (the target version's, which must outlive the walker; null, the default: none).
  // Under sys.monitoring (3.12+), an instrumented instruction is named as the one it replaced.
  void read_instructions(const OpcodeSet* set) {
    opcodes_ = set;
    instrumentation_.reset();
    if (set) instrumentation_.emplace(objects_, *set);
  }

  // All thread states of the interpreter at `interp`, newest first, from its list head.
  // `top_unneeded`, if given, names threads whose top frame the caller does not need (one it
  // knows to be asleep): on 3.11-3.12 that frame is read through a pointer into the thread's own
  // C stack, a page of a mapping of its own per thread, which is most of what a sleeping thread
  // costs a sample. Such threads come back with top_read false and no top frame.
  Result<std::vector<RawThread>> threads(
      Address interp, Address head,
      const std::function<bool(const RawThread&)>& top_unneeded = {}) const;
  // One thread state alone, as threads() reads each (its successor not followed).
  Result<RawThread> thread(Address interp, Address tstate) const;
  // Frames innermost first. If `eval_groups` is given, it receives how
  // many of the frames each C-level call of the evaluation loop runs, innermost first (for
  // merging native stacks): one each before 3.11; from 3.11 on, up to the entry frame (3.11:
  // is_entry; 3.12+: the next shim frame). A call whose frame has not started yet counts 0.
  // `eval_entries` receives, per group, the address of the shim frame that ends it (3.12+; 0 for
  // groups ended otherwise): it lies in the C stack frame of the call, to find that call among
  // the native frames.
  // `where`, if given, receives each returned frame's address and code object (to read its
  // local variables).
  struct FrameAt {
    Address frame;
    Address code;
  };
  Result<std::vector<model::Frame>> walk(Address top_frame,
                                         std::vector<std::uint32_t>* eval_groups = nullptr,
                                         std::vector<Address>* eval_entries = nullptr,
                                         std::vector<FrameAt>* where = nullptr);
  // Where to read again, and what must be found there, for the last walk's stack to be the one
  // still there beneath its top frame: the top frame's code word (a frame popped and another
  // pushed at the same address is not the frame walked) and the instruction words of up to
  // `callers` frames under it. A caller's instruction moves only once its callee has returned;
  // the fetch copies callers before callees, so a callee popped and called again from a caller
  // that moved on in between would pair the caller's old line with a new call.
  // The frame of a suspended generator or coroutine (3.11+), whose frame is embedded in the
  // object and so not on any thread's stack: from its code object's address (tagged or not),
  // its instruction pointer, and the code object's first layout.code_size bytes, all read by the
  // caller (who batches such reads).
  Result<model::Frame> suspended_frame(Address code, Address instr,
                                       std::span<const std::byte> header);
  // The same before 3.11, where a suspended coroutine's frame is an object of its own: from its
  // f_code and f_lasti (bytes on 3.8-3.9, code units on 3.10; -1 before its first instruction).
  Result<model::Frame> suspended_frame_at_lasti(Address code, std::int64_t lasti,
                                                std::span<const std::byte> header);
  void add_checks(std::vector<process::ProcessMemory::Chunk>& where, std::vector<Address>& expected,
                  std::size_t callers) const;

 private:
  // Reads the thread state at `t` into `buf`, checking that it is one of `interp`'s.
  Status read_tstate(Address interp, Address t, std::vector<std::byte>& buf) const;
  RawThread parse_thread(Address t, const std::byte* buf) const;
  // 3.11-3.12: each thread's top frame, through its cframe (see threads()).
  Status read_tops(std::vector<RawThread>& threads,
                   const std::function<bool(const RawThread&)>& top_unneeded) const;
  struct RawFrame {
    Address address = 0;
    Address code = 0;
    Address instr = 0;       // 3.11+: current instruction pointer
    std::int64_t lasti = 0;  // 3.8-3.10: f_lasti
    std::uint8_t owner = 0;
    bool ends_call = false;  // the outermost frame its C-level evaluation call runs
    bool shim = false;       // 3.12+: a C-stack shim frame, which ends the call below it
  };
  model::Frame frame_of(const CodeInfo& info, std::int64_t offset) const;
  // The same into a frame made by its caller (where it is to stay).
  void fill(model::Frame& frame, const CodeInfo& info, std::int64_t offset) const;
  // A suspended frame's code object from its header as read by the caller, checked.
  Result<const CodeInfo*> suspended_code(Address code, std::span<const std::byte> header);
  // The instructions of pending_, each one's code unit read from the target (3.11+, where
  // instructions specialise as the program runs) in one batch.
  Status add_instructions();
  // The frames from top_frame outwards, into raw_.
  Status chain(Address top_frame);

  const Objects& objects_;
  CodeCache& codes_;
  bool nonblocking_;
  LineNumbers lines_;
  process::NamespaceTids* tids_ = nullptr;
  const OpcodeSet* opcodes_ = nullptr;
  std::optional<Instrumentation> instrumentation_;
  FrameReader frame_reader_;
  Address last_top_code_ = 0;
  // Scratch of the walk in progress, kept for the next one.
  std::vector<RawFrame> raw_;
  std::vector<std::byte> frame_buf_;
  std::vector<Address> codes_seen_;
  std::vector<std::byte> headers_;
  // Where each code object's bytes start in headers_, and after the last, their end: a header, or
  // with opcodes a header and code units (walk()).
  std::vector<std::uint64_t> header_at_;
  std::vector<process::ProcessMemory::Chunk> header_chunks_;
  // A frame of walk()'s result before it is made: where it is, and with opcodes, its instruction
  // (of pending_; kNoInstruction: none).
  static constexpr std::size_t kNoInstruction = SIZE_MAX;
  struct Placed {
    const CodeInfo* info;
    std::int64_t offset;
    std::size_t pending;
  };
  std::vector<Placed> placed_;
  // An instruction one or more frames are at (a recursion's are at one), to be read.
  struct PendingInstruction {
    Address code;
    const CodeInfo* info;
    std::int64_t offset;      // as the frame's pointer gives it
    std::int64_t start = -1;  // of the instruction covering it; -1: none
    Positions positions;
    std::size_t same_unit_as;    // the pending instruction whose code unit is this one's (itself)
    Address monitoring = 0;      // 3.12+: the code object's sys.monitoring data, from its header
    std::size_t code_index = 0;  // of its code object's bytes in headers_ (header_at_)
    std::optional<model::Instruction> instruction{};  // the result, if it could be read
  };
  std::vector<PendingInstruction> pending_;
  std::vector<std::uint8_t> units_;
  std::vector<process::ProcessMemory::Chunk> unit_chunks_;
  std::vector<Instrumentation::Hidden> hidden_;
  std::vector<std::size_t> hidden_at_;  // the pending instruction of each of hidden_
};

}  // namespace dapprof::sampler::python
