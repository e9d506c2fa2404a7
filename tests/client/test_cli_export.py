"""The command line against a scripted adapter (fake_adapter.py), where the daemon's answers are
known exactly: the files written are the content exportProfile returned, byte for byte; the
table is the daemon's topFunctions; hideDebugger follows --debugger-frames; a refused export is
reported with the daemon's message."""
from __future__ import annotations

import json

import pytest

from dapprof_client import cli
from dapprof_client.protocol import EXPORT_PROFILE, FORMATS, STOP_PROFILING, ErrorId
from fake_adapter import SUMMARY, FakeAdapter, error, export_ok, export_refused

# not JSON, not ending in a newline, not ASCII: written unchanged all the same
CONTENT = "{format} — frames «work» ✓\r\nlast line"


@pytest.fixture
def adapter():
    made = []

    def make(**kwargs) -> FakeAdapter:
        made.append(FakeAdapter(**kwargs))
        return made[-1]

    yield make
    for a in made:
        a.close()


def run_cli(fake: FakeAdapter, tmp_path, *args: str) -> int:
    return cli.main(["--connect", fake.address, "--duration", "0.3",
                     "--json-summary", str(tmp_path / "summary.json"), *args,
                     str(tmp_path / "app.py")])


def test_export_writes_the_daemons_content(adapter, tmp_path, capsys):
    fake = adapter(export=export_ok(CONTENT, sample_count=3))
    code = run_cli(fake, tmp_path, "--export", f"chrometrace={tmp_path}/t.json",
                   "--speedscope", str(tmp_path / "s.json"),
                   "--collapsed", str(tmp_path / "sub" / "c.txt"),
                   "--export", f"cpuprofile={tmp_path}/p.cpuprofile")
    out, err = capsys.readouterr()
    assert code == 0, err
    # one exportProfile per file, in command-line order, hiding the debugger by default
    assert fake.arguments(EXPORT_PROFILE) == [
        {"format": f, "hideDebugger": True}
        for f in ("chrometrace", "speedscope", "collapsed", "cpuprofile")]
    for name, fmt in (("t.json", "chrometrace"), ("s.json", "speedscope"),
                      ("sub/c.txt", "collapsed"), ("p.cpuprofile", "cpuprofile")):
        assert (tmp_path / name).read_bytes() == CONTENT.replace("{format}", fmt).encode()
    assert f"wrote {tmp_path}/s.json (speedscope, 3 samples, from dapprof)" in err
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert [e["format"] for e in summary["exports"]] == ["chrometrace", "speedscope",
                                                         "collapsed", "cpuprofile"]
    # the table and the JSON summary are the daemon's topFunctions
    assert summary["topFunctions"] == SUMMARY["topFunctions"]
    assert summary["samples"] == 3 and summary["streamSamples"] == 3
    assert "   66.67%  66.67%        2        2  work (/app/main.py)" in out
    assert "   33.33% 100.00%        1        3  <module> (/app/main.py)" in out
    assert fake.arguments(STOP_PROFILING) == [{"hideDebugger": True}]


def test_a_binary_format_is_written_as_the_bytes_its_base64_holds(adapter, tmp_path, capsys):
    """pprof's gzip travels base64-encoded (contentEncoding); the file gets the bytes."""
    import base64
    import gzip
    document = gzip.compress(bytes(range(256)) * 4)

    def answer(arguments: dict) -> dict:
        return {"success": True, "body": {
            "format": arguments["format"], "fileExtension": "pb.gz", "contentEncoding": "base64",
            "content": base64.b64encode(document).decode("ascii"), "sampleCount": 3}}
    fake = adapter(export=answer)
    code = run_cli(fake, tmp_path, "--export", f"pprof={tmp_path}/p.pb.gz")
    _, err = capsys.readouterr()
    assert code == 0, err
    assert fake.arguments(EXPORT_PROFILE) == [{"format": "pprof", "hideDebugger": True}]
    assert (tmp_path / "p.pb.gz").read_bytes() == document


def test_debugger_frames_ask_the_daemon_not_to_hide_them(adapter, tmp_path, capsys):
    fake = adapter()
    code = run_cli(fake, tmp_path, "--debugger-frames", "--export",
                   f"flamegraph={tmp_path}/f.svg", "--output", str(tmp_path / "d.json"))
    assert code == 1  # the fake writes no file, and the client says so
    assert fake.arguments(EXPORT_PROFILE) == [{"format": "flamegraph", "hideDebugger": False}]
    assert fake.arguments(STOP_PROFILING) == [
        {"hideDebugger": False, "outputPath": str(tmp_path / "d.json"), "format": "speedscope"}]
    assert (tmp_path / "f.svg").read_text() == "flamegraph document"
    assert "dapprof wrote no speedscope file" in capsys.readouterr().err


def test_a_refused_export_is_an_error_with_the_daemons_message(adapter, tmp_path, capsys):
    fake = adapter(export=export_refused)
    code = run_cli(fake, tmp_path, "--speedscope", str(tmp_path / "s.json"))
    out, err = capsys.readouterr()
    assert code == 1
    assert ("error: dapprof could not export the profile as speedscope: There is no profile to "
            "export in this debug session.") in err
    assert not (tmp_path / "s.json").exists()
    assert "work (/app/main.py)" in out  # the summary is still printed


def test_a_dapprof_without_export_profile_is_named(adapter, tmp_path, capsys):
    """An older dapprof passes exportProfile on to debugpy, which answers without an error id."""
    fake = adapter(export=lambda arguments: error('Invalid message: unknown command '
                                                  '"exportProfile"', None))
    assert run_cli(fake, tmp_path, "--collapsed", str(tmp_path / "c.txt")) == 1
    err = capsys.readouterr().err
    assert 'unknown command "exportProfile"' in err and "update dapprof" in err


def test_other_export_errors_keep_the_daemons_message(adapter, tmp_path, capsys):
    fake = adapter(export=lambda arguments: error("boom inside dapprof", ErrorId.Internal))
    assert run_cli(fake, tmp_path, "--export", f"speedscope={tmp_path}/s.json") == 1
    err = capsys.readouterr().err
    assert "could not export the profile as speedscope: boom inside dapprof" in err
    assert "update dapprof" not in err


def test_a_stream_that_breaks_the_protocol_fails_the_run(adapter, tmp_path, capsys):
    bad = [{"newFrames": {}, "samples": [[9]], "sampleCount": 1, "duration": 1.0}]
    fake = adapter(events=bad)
    assert run_cli(fake, tmp_path) == 1
    assert "references frame ID 9, which was never announced" in capsys.readouterr().err


@pytest.mark.parametrize("bad", ["svg=x", "speedscope=", "speedscope", "=x"])
def test_export_needs_a_known_format_and_a_file(bad, capsys):
    with pytest.raises(SystemExit) as exit:
        cli.parse_args(["--export", bad, "app.py"])
    assert exit.value.code == 2
    assert "FORMAT=FILE" in capsys.readouterr().err


def test_every_format_can_be_exported_and_old_options_still_parse():
    opts = cli.parse_args([*(x for f in FORMATS for x in ("--export", f"{f}=out.{f}")),
                           "--speedscope", "a.json", "--collapsed", "b.txt", "app.py"])
    assert opts.export[-2:] == [("speedscope", "a.json"), ("collapsed", "b.txt")]
    assert [f for f, _ in opts.export[:-2]] == list(FORMATS)
