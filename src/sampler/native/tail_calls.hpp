#pragma once
// Names for the functions that builtins jump to. An optimising build often ends a builtin's C
// function (Argument Clinic's wrapper: list_sort) with a jump to the function doing the work
// (list_sort_impl) instead of a call, so the wrapper's frame is gone from the stack and only
// the unnamed function it jumped to remains. Such a function is named after the method whose
// code jumps to it, when that is the only one that does.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sampler/native/elf_symbols.hpp"

namespace dapprof::sampler::native {

// `methods`: (link-time address of a method's C function in `elf`, its name). The result maps
// the start of each function one of them jumps to (a `jmp rel32` to where the unwind tables
// start a function) to that method's name.
std::unordered_map<std::uint64_t, std::string> tail_call_names(
    const ElfSymbols& elf, const std::vector<std::pair<std::uint64_t, std::string>>& methods);

}  // namespace dapprof::sampler::native
