#pragma once
// The profiling extension's requests, responses and events (cppdap style): parsed from the
// client's JSON with validation, serialised with to_json. The types, their parse and to_json, the
// command and event names, ProfilingErrorId, the format names and the arguments' ranges are
// generated from schemas/ by tools/protocol/generate.py (protocol/generated/messages.hpp); this
// header is what callers include, and messages.cpp defines what a generator cannot derive
// (StartProfilingResponse::from). Field meanings are documented in docs/PROFILING.md.
#include "protocol/generated/messages.hpp"  // IWYU pragma: export
