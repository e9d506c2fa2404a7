#include "app/cli/proc_info.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>

namespace dapprof::app::cli {

std::vector<std::string> command_line(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  const std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  std::string current;
  for (const char c : raw) {
    if (c == '\0') {
      args.push_back(std::move(current));
      current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty()) args.push_back(std::move(current));
  return args;
}

std::string executable(pid_t pid) {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec);
  return ec ? std::string() : path.string();
}

std::optional<int> thread_count(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("Threads:")) {
      try {
        return std::stoi(line.substr(8));
      } catch (const std::exception&) {
        return std::nullopt;
      }
    }
  }
  return std::nullopt;
}

std::string joined(const std::vector<std::string>& args) {
  std::string out;
  for (const auto& a : args) {
    if (!out.empty()) out += ' ';
    out += a;
  }
  return out;
}

}  // namespace dapprof::app::cli
