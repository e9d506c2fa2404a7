#include "app/cli/output_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace dapprof::app::cli {

Result<OutputFile> OutputFile::claim(std::string path) {
  // O_EXCL first, so that a file this run made is told from one that was there.
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  bool created = static_cast<bool>(fd);
  if (!fd && errno == EEXIST) fd = UniqueFd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd) {
    return Error{fmt::format("cannot write '{}': {}", path, std::strerror(errno)),
                 ErrorCode::OutputFailed};
  }
  return OutputFile(std::move(path), std::move(fd), created);
}

OutputFile::OutputFile(OutputFile&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::move(other.fd_)),
      created_(std::exchange(other.created_, false)) {}

OutputFile::~OutputFile() {
  if (created_) ::unlink(path_.c_str());
}

}  // namespace dapprof::app::cli
