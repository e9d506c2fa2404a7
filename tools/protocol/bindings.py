"""Every naming decision of the generated code that the schemas do not make: which type each schema
becomes in each language, and the C++ names, types and error words kept from the hand-written API.
The generator stops on a schema or string enum that is not named here."""
from __future__ import annotations

# The type each schema (or object definition in $defs) becomes: (C++ struct, TypeScript interface).
# Every schema must be named here, so that a new one is not left out of the clients unnoticed.
# No C++ struct: profilingData is encoded by hand in batch.cpp (for speed) from model types, and
# gets constants for its field names instead.
TYPES: dict[str, tuple[str | None, str]] = {
    "functionStats": ("FunctionStats", "FunctionStats"),
    "frame": (None, "Frame"),
    "instruction": (None, "Instruction"),
    "thread": (None, "ThreadInfo"),
    "process": (None, "ProcessInfo"),
    "startProfilingArguments": ("StartProfilingArguments", "StartProfilingArguments"),
    "startProfilingResponse": ("StartProfilingResponse", "StartProfilingResponseBody"),
    "stopProfilingArguments": ("StopProfilingArguments", "StopProfilingArguments"),
    "stopProfilingResponse": ("ProfilingSummary", "ProfilingSummary"),
    "profilingData": (None, "ProfilingDataBody"),
    "profilingStopped": ("ProfilingStopped", "ProfilingStoppedBody"),
    "exportProfileArguments": ("ExportProfileArguments", "ExportProfileArguments"),
    "exportProfileResponse": ("ExportProfileResponse", "ExportProfileResponseBody"),
    # The task document is rendered by formats/async_tasks_json.cpp, shared with `dump --async`.
    "taskFrame": (None, "TaskFrame"),
    "asyncTask": (None, "AsyncTask"),
    "asyncTasksArguments": ("AsyncTasksArguments", "AsyncTasksArguments"),
    "asyncTasksResponse": (None, "AsyncTasksResponseBody"),
}
# profilingStopped repeats the stopProfiling response's fields: in C++ they are one member of that
# type, in TypeScript the interface extends it. (struct, C++ member, the repeated schema)
EMBEDS = {"profilingStopped": ("summary", "stopProfilingResponse")}
# String enums with a type of their own: (schema or def, field) -> (C++ type, TS type, TS list).
# A C++ type of None gives constants for the values (batch.cpp writes origin by hand). Fields
# named "format" are model::ProfileFormat everywhere.
ENUMS = {
    ("profilingStopped", "reason"): ("StoppedReason", "StopReason", "STOP_REASONS"),
    ("frame", "origin"): (None, "FrameOrigin", "FRAME_ORIGINS"),
    ("frame", "task"): (None, "TaskState", "TASK_STATES"),
    # The same type for both: the response repeats the mode asked for.
    ("startProfilingArguments", "async"): ("AsyncMode", "AsyncMode", "ASYNC_MODES"),
    ("startProfilingResponse", "async"): ("AsyncMode", "AsyncMode", "ASYNC_MODES"),
    ("startProfilingArguments", "mode"): ("SamplingMode", "SamplingMode", "SAMPLING_MODES"),
    ("startProfilingResponse", "mode"): ("SamplingMode", "SamplingMode", "SAMPLING_MODES"),
    ("exportProfileResponse", "contentEncoding"): ("ContentEncoding", "ContentEncoding",
                                                   "CONTENT_ENCODINGS"),
    ("asyncTask", "state"): (None, "TaskState", "TASK_STATES"),
}
FORMAT_FIELD = "format"

# --- C++ ---------------------------------------------------------------------------------------
# Where the C++ names differ from snake_case of the JSON name (kept from the hand-written API).
FIELD_NAMES = {("stopProfilingResponse", "duration"): "duration_ms"}
FIELD_TYPES = {"pid": "pid_t"}
# Optional strings that are std::string, empty meaning absent, rather than std::optional.
EMPTY_MEANS_ABSENT = {("startProfilingResponse", "warning"), ("profilingStopped", "message")}
# Integer arguments: the suffix of their constants' names (kMinRateHz) and the words after their
# range in errors ("between 1 and 10000 samples per second").
UNITS = {"rate": ("Hz", " samples per second"), "batchIntervalMs": ("", " ms")}
# What each pattern asks for, in words, for errors: "'outputPath' must be an absolute path".
PATTERNS = {"^/": "an absolute path", "^[a-z]+$": "lowercase letters",
            r"^[a-z]+(\.[a-z]+)*$": "lowercase letters, dot-separated",
            r"^3\.[0-9]+\.[0-9]+": "a Python version such as 3.12.1"}
# The reason given with a dependentRequired or `not` violation, so that the user knows what to do.
WHY = {
    ("stopProfilingArguments", "format"): "it says how to write that file",
    # Unwinding native stacks reads registers of stopped threads, so it cannot run nonblocking.
    ("startProfilingArguments", "not"): "native stacks can only be read while the threads are "
                                         "paused; set 'nonblocking' to false",
}
# Members a generator cannot derive; defined by hand in src/protocol/messages.cpp.
EXTRA_MEMBERS = {
    "StartProfilingResponse": [
        "// The response to a start with these settings, on process `pid`.",
        "static StartProfilingResponse from(const StartProfilingArguments& enabled, pid_t pid,",
        "                                   std::string python_version);",
    ],
}
