#include "model/text.hpp"

#include <ostream>

namespace dapprof::model {

const std::string& Text::empty_string() {
  static const std::string empty;
  return empty;
}

std::ostream& operator<<(std::ostream& os, const Text& text) { return os << text.view(); }

}  // namespace dapprof::model
