#pragma once
// Which process a sample was taken in, as the sampler reads it once, the protocol announces it
// and the writers label it (the level above threads when a run samples several processes).
#include <sys/types.h>

#include <string>

namespace dapprof::model {

struct ProcessInfo {
  pid_t pid = 0;
  // Its arguments joined by spaces, as ps shows them; "" when unknown (gone before it was read).
  std::string command_line;
  bool operator==(const ProcessInfo&) const = default;
};

}  // namespace dapprof::model
