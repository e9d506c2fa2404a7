"""Profile a Python program through dapprof from a script or CI job.

A small Debug Adapter Protocol client: it starts a debug session through dapprof (a running
`dapprof serve`, or `dapprof stdio` spawned here), launches or attaches to the program, starts
live profiling, decodes (and checks) the `profilingData` stream, stops profiling, prints the
daemon's summary of the run (its top functions) and writes the profile files dapprof makes
(exportProfile, or stopProfiling's outputPath). Standard library only; Python 3.8 or newer.

    python3 client/dapprof_client.py --duration 10 --export speedscope=out.json app.py -- --arg
    python3 dapprof-client.pyz ...                     # the same, as one file (build_single_file.py)

As a library (client/ or dapprof-client.pyz on sys.path):

    from dapprof_client import Session
    with Session.spawn("dapprof") as session:          # or Session.connect("127.0.0.1", 4711)
        session.initialize()
        session.launch(program="app.py", args=["--fast"])
        session.start_profiling(rate=200)
        session.collect(duration=10)
        session.stop_profiling(output_path="/tmp/app.svg", format="flamegraph")
        print(session.profile.format_summary(top=10))
        doc = session.export_profile("speedscope")["content"]
        session.disconnect()

The protocol is documented in dapprof's docs/PROFILING.md; its names are in protocol.py.
"""
from .dap import Connection
from .decode import Frame, Profile, Sample, StreamDecoder, Thread
from .errors import ClientError, ConnectionClosed, ProtocolError, RequestFailed
from .protocol import DEFAULT_FORMAT, FORMATS, ErrorId
from .session import Session, document_bytes
from .summary import FunctionStats, format_summary, summary_dict

__all__ = ["ClientError", "Connection", "ConnectionClosed", "DEFAULT_FORMAT", "ErrorId",
           "FORMATS", "Frame", "FunctionStats", "Profile", "ProtocolError", "RequestFailed",
           "Sample", "Session", "StreamDecoder", "Thread", "document_bytes", "format_summary",
           "main", "summary_dict"]


def main(argv=None) -> int:
    """The command line (cli.main), imported when called."""
    from .cli import main as cli_main
    return cli_main(argv)
