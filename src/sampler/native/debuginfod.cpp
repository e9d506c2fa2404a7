#include "sampler/native/debuginfod.hpp"

#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace dapprof::sampler::native {

// The functions used, looked up in the library loaded at run time.
struct Debuginfod::Library {
  decltype(&debuginfod_begin) begin = nullptr;
  decltype(&debuginfod_end) end = nullptr;
  decltype(&debuginfod_find_debuginfo) find_debuginfo = nullptr;
  decltype(&debuginfod_set_progressfn) set_progressfn = nullptr;

  static Library* load(std::string& why) {
    void* handle = ::dlopen(DEBUGINFOD_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      why = fmt::format("{} cannot be loaded ({}); install libdebuginfod1", DEBUGINFOD_SONAME,
                        ::dlerror());
      return nullptr;
    }
    // Never unloaded: its worker thread may outlive every client. One per process.
    static Library loaded;
    auto* lib = &loaded;
    lib->begin = reinterpret_cast<decltype(begin)>(::dlsym(handle, "debuginfod_begin"));
    lib->end = reinterpret_cast<decltype(end)>(::dlsym(handle, "debuginfod_end"));
    lib->find_debuginfo =
        reinterpret_cast<decltype(find_debuginfo)>(::dlsym(handle, "debuginfod_find_debuginfo"));
    lib->set_progressfn =
        reinterpret_cast<decltype(set_progressfn)>(::dlsym(handle, "debuginfod_set_progressfn"));
    if (!lib->begin || !lib->end || !lib->find_debuginfo || !lib->set_progressfn) {
      why = fmt::format("{} lacks the functions dapprof calls", DEBUGINFOD_SONAME);
      return nullptr;
    }
    return lib;
  }
};

namespace {
// Set when the process ends: a transfer in progress is abandoned (the progress callback's
// non-zero answer), so that exit never waits for a slow server.
std::atomic<bool> g_abandon{false};
int progress(debuginfod_client*, long, long) { return g_abandon.load() ? 1 : 0; }
}  // namespace

Debuginfod* Debuginfod::instance() {
  static std::unique_ptr<Debuginfod> client = []() -> std::unique_ptr<Debuginfod> {
    const char* urls = std::getenv(DEBUGINFOD_URLS_ENV_VAR);
    if (!urls || !*urls) return nullptr;
    std::string why;
    Library* lib = Library::load(why);
    if (!lib) {
      spdlog::warn("debuginfod servers are named (DEBUGINFOD_URLS={}) but {}", urls, why);
      return nullptr;
    }
    return std::unique_ptr<Debuginfod>(new Debuginfod(urls, lib));
  }();
  return client.get();
}

Debuginfod::Debuginfod(std::string urls, Library* library)
    : urls_(std::move(urls)), library_(library), worker_([this] { run(); }) {}

Debuginfod::~Debuginfod() {
  g_abandon = true;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  worker_.join();
}

Debuginfod::Answer Debuginfod::query(const std::string& build_id) {
  std::lock_guard lock(mutex_);
  auto [it, inserted] = answers_.try_emplace(build_id);
  if (inserted) {
    queue_.push_back(build_id);
    wake_.notify_one();
  }
  return it->second;
}

void Debuginfod::run() {
  debuginfod_client* client = library_->begin();
  if (client) library_->set_progressfn(client, &progress);
  for (;;) {
    std::string build_id;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) break;
      build_id = std::move(queue_.front());
      queue_.pop_front();
    }
    Answer answer{State::Missing, {}, {}};
    if (!client) {
      answer.error = "the debuginfod client could not start";
    } else {
      char* path = nullptr;
      const int fd = library_->find_debuginfo(
          client, reinterpret_cast<const unsigned char*>(build_id.c_str()), 0, &path);
      if (fd >= 0) {
        ::close(fd);
        answer = {State::Found, path ? path : "", {}};
      } else {
        answer.error = std::strerror(-fd);
      }
      std::free(path);
    }
    std::lock_guard lock(mutex_);
    answers_[build_id] = std::move(answer);
  }
  if (client) library_->end(client);
}

}  // namespace dapprof::sampler::native

#if defined(__SANITIZE_ADDRESS__)
// OpenSSL, which libdebuginfod's libcurl loads, keeps per-thread state that it frees only at its
// own cleanup, which a library never unloaded does not reach: not a leak of dapprof's, and one
// LeakSanitizer would otherwise report from every process that asked a debuginfod server.
extern "C" const char* __lsan_default_suppressions() { return "leak:libcrypto.so\n"; }
#endif
