#pragma once
// A local variable of a Python frame as `dapprof dump --locals` shows it: its name and a short
// description of its value read from the process (not the program's own repr(): nothing runs in
// the program).
#include <string>

namespace dapprof::model {

struct LocalVariable {
  std::string name;
  std::string value;  // "42", "'text'", "<list len=3>", "<Foo at 0x7f...>"
  bool argument = false;
  bool operator==(const LocalVariable&) const = default;
};

}  // namespace dapprof::model
