#include "app/cli/ps.hpp"

#include <fmt/format.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/cli/proc_info.hpp"
#include "sampler/process/maps.hpp"
#include "sampler/process/permissions.hpp"
#include "sampler/process/pid_namespace.hpp"
#include "sampler/python/discovery.hpp"

namespace dapprof::app::cli {
namespace {

using Json = nlohmann::ordered_json;

std::string user_name(unsigned uid) {
  std::vector<char> buffer(4096);
  passwd entry{};
  passwd* found = nullptr;
  if (getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found)
    return found->pw_name;
  return std::to_string(uid);
}

bool names_python(const std::vector<std::string>& command) {
  if (command.empty()) return false;
  const std::string base = std::filesystem::path(command.front()).filename().string();
  return base.starts_with("python");
}

// "3.11" from a command's first word (python3.11), for a process whose mappings cannot be read.
std::string version_in_name(const std::vector<std::string>& command) {
  const std::string base = std::filesystem::path(command.front()).filename().string();
  const std::string rest = base.substr(std::string("python").size());
  const auto dot = rest.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 >= rest.size()) return "";
  return std::all_of(rest.begin(), rest.end(), [](char c) { return std::isdigit(c) || c == '.'; })
             ? rest
             : "";
}

std::optional<PythonProcessEntry> inspect(pid_t pid) {
  struct stat st {};
  if (stat(("/proc/" + std::to_string(pid)).c_str(), &st) != 0) return std::nullopt;
  PythonProcessEntry entry;
  entry.pid = pid;
  entry.uid = st.st_uid;
  entry.command = command_line(pid);
  if (entry.command.empty()) return std::nullopt;  // a kernel thread, or gone
  auto maps = sampler::process::read_maps(pid);
  entry.readable = static_cast<bool>(maps) && !maps->empty();
  if (entry.readable) {
    entry.version = sampler::python::version_in_maps(*maps);
    if (entry.version.empty()) return std::nullopt;
  } else {
    if (!names_python(entry.command)) return std::nullopt;
    entry.version = version_in_name(entry.command);
    entry.why = sampler::process::permission_denied_message(pid, "read its memory");
  }
  if (const auto ids = sampler::process::namespace_pids(pid); ids.size() > 1)
    entry.ns_pid = ids.back();
  entry.user = user_name(entry.uid);
  entry.own = entry.uid == geteuid();
  return entry;
}

}  // namespace

std::vector<PythonProcessEntry> list_python_processes() {
  std::vector<PythonProcessEntry> out;
  std::error_code ec;
  const pid_t self = getpid();
  for (const auto& dir : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = dir.path().filename().string();
    pid_t pid = 0;
    const auto [end, err] = std::from_chars(name.data(), name.data() + name.size(), pid);
    if (err != std::errc() || end != name.data() + name.size() || pid == self) continue;
    if (auto entry = inspect(pid)) out.push_back(std::move(*entry));
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.own != b.own ? a.own : a.pid < b.pid; });
  return out;
}

int run_ps(const PsOptions& options) {
  const auto processes = list_python_processes();
  if (options.json) {
    Json list = Json::array();
    for (const auto& p : processes) {
      list.push_back({{"pid", p.pid},
                      {"ns_pid", p.ns_pid > 0 ? Json(p.ns_pid) : Json()},
                      {"uid", p.uid},
                      {"user", p.user},
                      {"command", p.command},
                      {"version", p.version.empty() ? Json() : Json(p.version)},
                      {"own", p.own},
                      {"readable", p.readable}});
      if (!p.readable) list.back()["why"] = p.why;
    }
    std::cout << Json{{"processes", list}}.dump(2) << '\n';
    return 0;
  }
  // NSPID: the PID inside its container, where the program has one ("-": dapprof's namespace).
  std::cout << fmt::format("{:>8} {:>7}  {:<12} {:<8} {}\n", "PID", "NSPID", "USER", "PYTHON",
                           "COMMAND");
  for (const auto& p : processes) {
    std::cout << fmt::format("{:>8} {:>7}  {:<12} {:<8} {}{}\n", p.pid,
                             p.ns_pid > 0 ? std::to_string(p.ns_pid) : "-", p.user,
                             p.version.empty() ? "?" : p.version, joined(p.command),
                             p.readable ? "" : "  (cannot be read by this user)");
  }
  return 0;
}

}  // namespace dapprof::app::cli
