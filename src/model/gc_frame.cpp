#include "model/frame.hpp"

namespace dapprof::model {

Frame gc_frame() {
  Frame f;
  f.function = std::string(kGcFunction);
  f.kind = FrameKind::Gc;
  return f;
}

}  // namespace dapprof::model
