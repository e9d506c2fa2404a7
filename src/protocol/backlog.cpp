#include "protocol/backlog.hpp"

#include <utility>

namespace dapprof::protocol {

void Backlog::push(ProfilingBatch batch) {
  if (!pending_) {
    pending_ = std::move(batch);
    return;
  }
  if (pending_->sample_count() + batch.sample_count() > max_samples_) {
    dropped_total_ += pending_->sample_count();
    drop_samples(*pending_);
  }
  pending_ = merge(std::move(*pending_), std::move(batch));
}

std::optional<ProfilingBatch> Backlog::take() { return std::exchange(pending_, std::nullopt); }

}  // namespace dapprof::protocol
