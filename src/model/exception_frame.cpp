#include <string>

#include "model/frame.hpp"

namespace dapprof::model {

Frame exception_frame(std::string_view type_name) {
  Frame f;
  f.function = "(exception) " + std::string(type_name);
  f.kind = FrameKind::Exception;
  return f;
}

}  // namespace dapprof::model
