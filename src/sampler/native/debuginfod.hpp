#pragma once
// Debug files from debuginfod servers (DEBUGINFOD_URLS), fetched with elfutils' libdebuginfod on
// a thread of their own, so that no sample ever waits on the network: a module asked for stays
// unnamed until its answer comes, then its frames are named from then on. The library is loaded
// when first needed (dlopen), so that dapprof runs where it is not installed, and links
// statically where Debian ships no archive of it.
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

namespace dapprof::sampler::native {

class Debuginfod {
 public:
  // The process's client; null unless DEBUGINFOD_URLS names a server and libdebuginfod.so.1
  // loads (a note in the log says why not).
  static Debuginfod* instance();
  ~Debuginfod();
  Debuginfod(const Debuginfod&) = delete;
  Debuginfod& operator=(const Debuginfod&) = delete;

  enum class State { Pending, Found, Missing };
  struct Answer {
    State state = State::Pending;
    std::string path;   // Found: the debug file in debuginfod's cache
    std::string error;  // Missing: what the servers said
  };
  // What is known of `build_id` (hex) now; the first call asks the servers for it.
  Answer query(const std::string& build_id);
  const std::string& urls() const { return urls_; }

 private:
  struct Library;
  Debuginfod(std::string urls, Library* library);
  void run();

  std::string urls_;
  Library* library_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::string> queue_;
  std::unordered_map<std::string, Answer> answers_;
  bool stopping_ = false;
  std::thread worker_;  // last: started once the rest is in place
};

}  // namespace dapprof::sampler::native
