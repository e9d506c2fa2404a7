#pragma once
// The PythonProcess of an interpreter found and checked by PythonProcess::attach (attach.cpp).
#include <sys/types.h>

#include <memory>
#include <string>

#include "sampler/native/native_stacks.hpp"
#include "sampler/python/discovery.hpp"
#include "sampler/python/layout.hpp"
#include "sampler/sampler.hpp"

namespace dapprof::sampler::python {

// native: null unless options.native. warning: what to tell the user once ("" for nothing).
std::unique_ptr<PythonProcess> open_process(pid_t pid, const AttachOptions& options,
                                            Interpreter interp, Layout layout,
                                            std::unique_ptr<native::NativeStacks> native,
                                            std::string warning);

}  // namespace dapprof::sampler::python
