// Placeholder until the sampling core lands.
#include "sampler/sampler.hpp"
