#include "sampler/python/pthread_tids.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <set>

namespace dapprof::sampler::python {
namespace {

constexpr std::uint64_t kSearch = 2048;  // struct pthread is ~2.3 KB; the TID is well inside
constexpr std::uint64_t kGlibcTidOffset = 0x2d0;  // x86-64 glibc 2.x: preferred when it fits

}  // namespace

std::optional<std::uint64_t> PthreadTids::find_offset(const process::ProcessMemory& memory,
                                                      const std::vector<std::uint64_t>& pthreads,
                                                      const std::vector<pid_t>& known) const {
  const std::set<pid_t> tids(known.begin(), known.end());
  std::optional<std::set<std::uint64_t>> candidates;
  std::vector<std::byte> buf(kSearch);
  for (std::uint64_t p : pthreads) {
    if (p == 0 || !memory.read(p, buf.data(), buf.size())) continue;
    std::set<std::uint64_t> here;
    for (std::uint64_t off = 0; off + 4 <= kSearch; off += 4) {
      std::int32_t v;
      std::memcpy(&v, buf.data() + off, 4);
      if (tids.contains(v)) here.insert(off);
    }
    if (candidates) {
      std::set<std::uint64_t> both;
      std::set_intersection(candidates->begin(), candidates->end(), here.begin(), here.end(),
                            std::inserter(both, both.begin()));
      candidates = std::move(both);
    } else {
      candidates = std::move(here);
    }
  }
  if (!candidates || candidates->empty()) return std::nullopt;
  if (candidates->contains(kGlibcTidOffset)) return kGlibcTidOffset;
  return *candidates->begin();
}

std::vector<std::uint64_t> PthreadTids::tids(const process::ProcessMemory& memory,
                                             const std::vector<std::uint64_t>& pthreads,
                                             const std::vector<pid_t>& host_known,
                                             process::NamespaceTids* ns) {
  std::vector<std::uint64_t> out(pthreads.size(), 0);
  std::vector<pid_t> inner;
  if (ns && ns->nested())
    for (const pid_t tid : host_known)
      if (const pid_t in = ns->inner(tid)) inner.push_back(in);
  const std::vector<pid_t>& known = ns && ns->nested() ? inner : host_known;
  if (!offset_) offset_ = find_offset(memory, pthreads, known);
  if (!offset_) return out;
  std::vector<std::int32_t> values(pthreads.size(), 0);
  std::vector<process::ProcessMemory::Chunk> chunks;
  for (std::size_t i = 0; i < pthreads.size(); ++i) {
    chunks.push_back({pthreads[i] + *offset_, &values[i], sizeof(std::int32_t)});
  }
  if (!memory.read_many(chunks)) return out;  // unknown this time; the threads still get stacks
  const std::set<pid_t> tids(known.begin(), known.end());
  for (std::size_t i = 0; i < pthreads.size(); ++i) {
    if (!tids.contains(values[i])) continue;
    out[i] = static_cast<std::uint64_t>(ns ? ns->host(values[i]) : values[i]);
  }
  return out;
}

}  // namespace dapprof::sampler::python
