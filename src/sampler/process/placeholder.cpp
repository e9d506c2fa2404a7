// Placeholder so the library has a source until the process layer lands.
#include "sampler/process/memory.hpp"
