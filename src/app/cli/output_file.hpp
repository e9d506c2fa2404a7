#pragma once
// The file `record` will write, claimed before sampling starts so that an unwritable path fails
// at once, without truncating what the path holds until there is a profile to put there: a run
// that fails before it has one leaves an existing file as it was and a new one not at all.
#include <string>

#include "common/result.hpp"
#include "common/unique_fd.hpp"

namespace dapprof::app::cli {

class OutputFile {
 public:
  // Checks that `path` can be written; creates it when it does not exist.
  static Result<OutputFile> claim(std::string path);

  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&&) = delete;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  // Removes the file claim() created unless keep() was called.
  ~OutputFile();

  const std::string& path() const { return path_; }
  // The file stays, whatever is written to it next.
  void keep() { created_ = false; }

 private:
  OutputFile(std::string path, UniqueFd fd, bool created)
      : path_(std::move(path)), fd_(std::move(fd)), created_(created) {}

  std::string path_;
  UniqueFd fd_;  // held so that the check and the claim are of one file
  bool created_;
};

}  // namespace dapprof::app::cli
