#pragma once
// Top functions by self and total samples: the end-of-record summary, also for the daemon.
#include <cstddef>
#include <string>
#include <vector>

#include "formats/profile.hpp"

namespace dapprof::formats {

struct FunctionStats {
  std::string function;
  std::string file;
  double self = 0;   // samples in which it was the innermost frame
  double total = 0;  // samples in which it was on the stack (once per sample, even if recursive)
};

struct Summary {
  double samples = 0;
  std::vector<FunctionStats> functions;  // by self, then total, descending
};

// Functions are identified by name and file (lines within them are merged).
Summary summarize(const Profile& profile);
// Two short tables: the top `limit` functions by self samples, then by total samples.
std::string format_summary(const Summary& summary, std::size_t limit = 10);

}  // namespace dapprof::formats
