#pragma once
// A whole profile as the events a live run sends its client: profilingData batches, then
// profilingStopped with the summary, one DAP event a line. A client replays a file through the
// code that shows live data, and nothing of the protocol is decoded twice.
#include <cstddef>
#include <ostream>

#include "common/result.hpp"
#include "formats/profile.hpp"
#include "protocol/batch.hpp"

namespace dapprof::app::cli {

struct StreamOptions {
  protocol::Encoding encoding = protocol::Encoding::Stacks;
  std::size_t batch_samples = 10000;  // samples per profilingData event, at most
  std::string message;                // profilingStopped's, for a person
};

// A sample of weight w counts as round(w) samples (at least one), as collapsed counts do.
Status write_profile_stream(const formats::Profile& profile, std::ostream& out,
                            const StreamOptions& options = {});

}  // namespace dapprof::app::cli
