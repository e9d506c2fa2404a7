#pragma once
// The bytes of a gzip file (pprof's output), for tests that read what a binary format holds.
#include <zlib.h>

#include <string>

namespace dapprof::formats::test {

// Empty if `gz` is not one complete gzip stream.
inline std::string gunzip(const std::string& gz) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK) return {};  // 15 + 16: the gzip wrapper only
  // zlib's API is C: it takes non-const bytes it does not write to.
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  z.avail_in = static_cast<uInt>(gz.size());
  std::string out;
  char buf[4096];
  int status = Z_OK;
  while (status == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    status = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof buf - z.avail_out);
  }
  inflateEnd(&z);
  return status == Z_STREAM_END ? out : std::string();
}

}  // namespace dapprof::formats::test
