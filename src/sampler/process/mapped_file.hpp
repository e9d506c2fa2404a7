#pragma once
// A whole file mapped read-only, unmapped on destruction.
#include <cstddef>
#include <span>
#include <string>

#include "common/result.hpp"

namespace dapprof::sampler::process {

class MappedFile {
 public:
  static Result<MappedFile> open(const std::string& path);
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const std::byte> bytes() const { return {data_, size_}; }

 private:
  MappedFile(const std::byte* data, std::size_t size) : data_(data), size_(size) {}
  void release();
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace dapprof::sampler::process
