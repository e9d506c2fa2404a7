"""`dapprof dump --locals` against a program whose frames hold variables of every kind it
describes, under every supported interpreter: the values are compared with the program's own
repr() of them (numbers, strings, bytes) or with its id() (other objects)."""
from __future__ import annotations

import json
import subprocess

import pytest

from conftest import HERE, pythons, read_line, run

LOCALS = HERE / "fixtures" / "locals.py"


@pytest.fixture
def locals_target():
    procs = []

    def start(python: str) -> tuple[int, dict]:
        proc = subprocess.Popen([python, str(LOCALS)], stdout=subprocess.PIPE, text=True,
                                encoding="utf-8")
        procs.append(proc)
        return proc.pid, json.loads(read_line(proc.stdout, 30))

    yield start
    for p in procs:
        p.kill()
        p.wait()


def frames_by_function(doc: dict) -> dict:
    (thread,) = doc["threads"]
    return {f["function"].rsplit(".", 1)[-1]: f for f in thread["frames"]}


def check_frame(frame: dict, expected: dict) -> None:
    got = {v["name"]: v["value"] for v in frame["locals"]}
    arguments = {v["name"] for v in frame["locals"] if v["argument"]}
    want = {k: v for k, v in expected.items() if k != "arguments"}
    assert got == want
    assert arguments == set(expected.get("arguments", [])) | ({"depth"} if "depth" in want else set())


@pytest.mark.parametrize("interp", pythons.each(sampler_only_too=True))
def test_locals_of_every_kind_match_the_programs_repr(dapprof, locals_target, interp):
    pid, expected = locals_target(interp.path)
    out = run([dapprof, "dump", "--pid", str(pid), "--locals", "--json"])
    assert out.returncode == 0, out.stderr
    frames = frames_by_function(json.loads(out.stdout))
    check_frame(frames["inner"], expected["inner"])
    check_frame(frames["outer"], expected["outer"])  # unbound_later, not yet bound, is absent
    assert frames["<module>"]["locals"] == []  # module-level names are globals, not locals


def test_locals_in_text_like_py_spy(dapprof, locals_target):
    pid, expected = locals_target("/usr/bin/python3.11")
    out = run([dapprof, "dump", "--pid", str(pid), "--locals"])
    assert out.returncode == 0, out.stderr
    text = out.stdout
    inner = text.index("inner (")
    assert text.index("        Arguments:\n            depth: 3\n", inner) < text.index("outer (")
    assert "        Locals:\n            seen: 'cell value'\n" in text
    assert f"            text: {expected['outer']['text']}\n" in text
    # Without --locals, no variables.
    plain = run([dapprof, "dump", "--pid", str(pid)])
    assert plain.returncode == 0 and "Arguments:" not in plain.stdout


@pytest.mark.parametrize("mode", [["--nonblocking"], ["--native"]])
def test_locals_with_other_modes(dapprof, locals_target, mode):
    pid, expected = locals_target("/usr/bin/python3.11")
    out = run([dapprof, "dump", "--pid", str(pid), "--locals", "--json", *mode])
    assert out.returncode == 0, out.stderr
    (thread,) = json.loads(out.stdout)["threads"]
    python = [f for f in thread["frames"] if not f.get("native")]
    assert all("locals" in f for f in python)
    assert all("locals" not in f for f in thread["frames"] if f.get("native"))
    check_frame(frames_by_function({"threads": [{"frames": python}]})["outer"], expected["outer"])
